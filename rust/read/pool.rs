//! The process's pool of decoding threads, shared by every parallel read: its threads live
//! as long as the process, so the memory their allocator holds is reused from read to read.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock};

pub(super) type Task = Box<dyn FnOnce() + Send>;

/// The process's decoding threads: a queue of tasks and how many threads take from it.
pub(super) struct Pool {
    pub(super) tasks: Mutex<Sender<Task>>,
    pub(super) queue: Arc<Mutex<Receiver<Task>>>,
    pub(super) threads: Mutex<usize>,
}

/// The shared pool, with at least `threads` threads.
pub(super) fn pool(threads: usize) -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    let pool = POOL.get_or_init(|| {
        let (tx, rx) = channel::<Task>();
        Pool {
            tasks: Mutex::new(tx),
            queue: Arc::new(Mutex::new(rx)),
            threads: Mutex::new(0),
        }
    });
    if let Ok(mut running) = pool.threads.lock() {
        while *running < threads {
            let queue = Arc::clone(&pool.queue);
            let spawned = std::thread::Builder::new()
                .name("kafkalog-decode".into())
                .spawn(move || loop {
                    let Some(task) = queue.lock().ok().and_then(|q| q.recv().ok()) else {
                        return;
                    };
                    task();
                });
            if spawned.is_err() {
                break; // fewer threads than asked for; the ones there still work
            }
            *running += 1;
        }
    }
    pool
}

impl Pool {
    pub(super) fn submit(&self, task: Task) {
        if let Ok(tasks) = self.tasks.lock() {
            let _ = tasks.send(task);
        }
    }
}

//! Reading many segment files on several cores, in order.
//!
//! Worker threads take whole files in reading order and decode each into its own bounded
//! channel; the reader drains the channels in file order. Output is exactly what the
//! sequential [`LogReader`] gives, in the same order. Memory stays bounded: each worker holds
//! at most `DEPTH` finished batches ahead of the reader. There is no deadlock: files are taken
//! in order, so the earliest file not yet drained always has a worker on it.

use super::decoder::{Issue, IssueKind};
use super::reader::{LogReader, ReaderBuilder};
use super::seek::Planned;
use crate::arrow::builder::Origin;
use crate::error::{Error, Result};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use std::collections::{HashSet, VecDeque};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Finished batches a worker may hold ahead of the reader, per file.
const DEPTH: usize = 2;

enum Msg {
    Batch(RecordBatch),
    Issues(Vec<Issue>),
    Error(Error),
}

struct Job {
    file: Planned,
    out: SyncSender<Msg>,
}

struct Slot {
    origin: Origin,
    messages: Receiver<Msg>,
}

pub struct ParallelReader {
    schema: SchemaRef,
    slots: VecDeque<Slot>,
    stopped_partitions: HashSet<Origin>,
    issues: Vec<Issue>,
    jobs: Arc<Mutex<VecDeque<Job>>>,
    workers: Vec<JoinHandle<()>>,
    done: bool,
}

impl ParallelReader {
    /// Reads `files` (planned, in order) with `threads` workers.
    pub fn new(
        builder: ReaderBuilder,
        files: Vec<Planned>,
        issues: Vec<Issue>,
        threads: usize,
    ) -> Self {
        let schema = builder.schema();
        let mut slots = VecDeque::with_capacity(files.len());
        let mut jobs = VecDeque::with_capacity(files.len());
        for file in files {
            let (tx, rx) = sync_channel(DEPTH);
            slots.push_back(Slot {
                origin: file.0.origin.clone(),
                messages: rx,
            });
            jobs.push_back(Job { file, out: tx });
        }
        let jobs = Arc::new(Mutex::new(jobs));
        let workers = (0..threads.max(1))
            .map(|_| {
                let jobs = Arc::clone(&jobs);
                let builder = builder.clone();
                std::thread::spawn(move || work(&jobs, &builder))
            })
            .collect();
        ParallelReader {
            schema,
            slots,
            stopped_partitions: HashSet::new(),
            issues,
            jobs,
            workers,
            done: false,
        }
    }

    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    pub fn take_issues(&mut self) -> Vec<Issue> {
        std::mem::take(&mut self.issues)
    }

    /// Stops all work: files not started are dropped, workers stop at their next send.
    fn cancel(&mut self) {
        if let Ok(mut jobs) = self.jobs.lock() {
            jobs.clear();
        }
        self.slots.clear();
    }

    /// Moves to the next file, skipping those of partitions where reading stopped at a
    /// corruption (their workers stop when they find nobody listening).
    fn next_slot(&mut self) {
        self.slots.pop_front();
        while let Some(slot) = self.slots.front() {
            if slot.origin.topic.is_some() && self.stopped_partitions.contains(&slot.origin) {
                self.slots.pop_front();
            } else {
                break;
            }
        }
    }

    fn step(&mut self) -> Result<Option<RecordBatch>> {
        loop {
            let Some(slot) = self.slots.front() else {
                return Ok(None);
            };
            match slot.messages.recv() {
                Ok(Msg::Batch(batch)) => return Ok(Some(batch)),
                Ok(Msg::Issues(issues)) => {
                    for issue in &issues {
                        if issue.kind == IssueKind::Stopped {
                            self.stopped_partitions.insert(slot.origin.clone());
                        }
                    }
                    self.issues.extend(issues);
                }
                Ok(Msg::Error(err)) => return Err(err),
                // The file is finished.
                Err(_) => self.next_slot(),
            }
        }
    }
}

fn work(jobs: &Mutex<VecDeque<Job>>, builder: &ReaderBuilder) {
    loop {
        let Some(job) = jobs.lock().ok().and_then(|mut q| q.pop_front()) else {
            return;
        };
        let mut reader: LogReader = builder.clone().build_planned(vec![job.file], Vec::new());
        loop {
            let next = reader.next();
            let issues = reader.take_issues();
            if !issues.is_empty() && job.out.send(Msg::Issues(issues)).is_err() {
                break;
            }
            let sent = match next {
                None => break,
                Some(Ok(batch)) => job.out.send(Msg::Batch(batch)),
                Some(Err(err)) => {
                    let _ = job.out.send(Msg::Error(err));
                    break;
                }
            };
            if sent.is_err() {
                break; // the reader is gone or skipped this file
            }
        }
    }
}

impl Iterator for ParallelReader {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        match self.step() {
            Ok(Some(batch)) => Some(Ok(batch)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                self.cancel();
                Some(Err(e))
            }
        }
    }
}

impl Drop for ParallelReader {
    fn drop(&mut self) {
        self.cancel();
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

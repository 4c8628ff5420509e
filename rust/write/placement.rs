//! Where a write puts its files and how they appear there, safely.
//!
//! - **Names from data** ([`partition_dir`]): `<root>/<topic>-<partition>` is made only from a
//!   topic and partition that pass Kafka's rule (`format::segment::partition_dir_name`), under
//!   the root resolved to its real path, and refused when a symbolic link sits at the name. A
//!   valid name is one path component that is not `.` or `..`, so the target's parent is the
//!   resolved root: nothing is written outside it.
//! - **One writer per directory** ([`TargetLock`]): a writer holds an advisory `flock` on
//!   `<parent>/.<name>.kafkalog-lock` from before it creates its staging directory until after
//!   it has published (or given up). A second writer of the same directory gets a
//!   [`ErrorKind::Conflict`] error at once. An advisory lock rather than an exclusive create of
//!   a marker: the kernel drops a lock when its process dies, however it dies, so a later
//!   writer can tell a live writer from a killed one with certainty (a marker file outlives a
//!   SIGKILL, and a process id in it may be reused or belong to another host or container).
//!   The lock file is removed by its holder, while still holding it; a writer that locked a
//!   file already removed notices (the inode at the name differs) and tries again.
//! - **Staging** ([`Staging`]): everything is written in `<parent>/.<name>.kafkalog-staging.
//!   <unique>.tmp`, created with `mkdir` (which fails rather than reuse or follow anything at
//!   the name, a planted symbolic link included); files in it are created exclusively and not
//!   through links. Staging directories are never read as data (their names are not partition
//!   directory names, see `format::segment::is_staging_dir_name`).
//! - **Stale staging** ([`clean_stale`]): a staging directory belongs to the writer holding its
//!   owner's lock. One whose lock nobody holds was left by a killed writer; the next write in
//!   the same parent removes it.
//! - **Publishing** ([`publish`]): files and the staging directory are fsynced (unless turned
//!   off), then the staging directory is renamed to the target: with `RENAME_NOREPLACE` on
//!   Linux for a new directory (a name that appeared meanwhile is not replaced), and for an
//!   overwrite with `RENAME_EXCHANGE`, an atomic swap, so the target holds either the old
//!   contents or the new ones at every moment; the old contents are then removed. The parent
//!   directory is fsynced after the rename, so a power cut after a successful write does not
//!   lose it.
//! - **Failures** (a full disk, a read-only file system): a typed I/O error keeping the errno;
//!   the staging directory is removed; the target is untouched.

use crate::error::{Error, ErrorKind, Result};
use crate::format::segment::{
    is_job_staging_dir_name, job_staging_dir_name, owner_key, partition_dir_name, staging_dir_name,
    staging_dir_owner, validate_topic,
};
use std::fs::{File, OpenOptions};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

const LOCK_SUFFIX: &str = ".kafkalog-lock";

/// A job's staging directory ([`create_job_staging`]) older than this, when the next write in
/// its parent looks, is taken to be left by a job whose driver died.
pub const JOB_STAGING_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// `<root>/<topic>-<partition>` for a topic and partition taken from data: both checked as
/// Kafka checks them, the root resolved to its real path (symbolic links followed: the root is
/// the caller's choice), and the result refused if a symbolic link sits at the name.
pub fn partition_dir(root: &Path, topic: &str, partition: i64) -> Result<PathBuf> {
    let name = partition_dir_name(topic, partition)?;
    let root = resolve_dir(root)?;
    let target = root.join(&name);
    // A valid name is a single normal component: the parent is the root itself.
    debug_assert_eq!(target.parent(), Some(root.as_path()));
    refuse_link(&target)?;
    Ok(target)
}

/// A directory path made absolute, with its existing part resolved to the real path. The part
/// that does not exist yet must be plain names (no `..`).
pub fn resolve_dir(dir: &Path) -> Result<PathBuf> {
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let absolute = std::path::absolute(dir).map_err(|e| Error::io(e, dir))?;
    let mut existing = absolute.as_path();
    let mut missing = Vec::new();
    loop {
        match std::fs::canonicalize(existing) {
            Ok(real) => {
                let mut out = real;
                for part in missing.iter().rev() {
                    out.push(part);
                }
                return Ok(out);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let Some(Component::Normal(name)) = existing.components().next_back() else {
                    return Err(Error::invalid_argument(format!(
                        "{} cannot be resolved: '..' after a directory that does not exist",
                        dir.display()
                    )));
                };
                missing.push(name.to_os_string());
                existing = existing.parent().ok_or_else(|| Error::io(e, dir))?;
            }
            Err(e) => return Err(Error::io(e, existing)),
        }
    }
}

/// The target of a write given as a path: its parent resolved ([`resolve_dir`]), its last
/// component a plain name, and no symbolic link at it.
pub fn resolve_target(target: &Path) -> Result<PathBuf> {
    let Some(Component::Normal(name)) = target.components().next_back() else {
        return Err(Error::invalid_argument(format!(
            "{} does not end in a directory name",
            target.display()
        )));
    };
    let parent = target.parent().unwrap_or(Path::new(""));
    let resolved = resolve_dir(parent)?.join(name);
    refuse_link(&resolved)?;
    Ok(resolved)
}

fn refuse_link(path: &Path) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => Err(Error::invalid_argument(format!(
            "{} is a symbolic link; kafkalog does not write through links",
            path.display()
        ))),
        _ => Ok(()),
    }
}

fn name_of(target: &Path) -> Result<&str> {
    target.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
        Error::invalid_argument(format!(
            "{} does not end in a UTF-8 directory name",
            target.display()
        ))
    })
}

fn lock_path(parent: &Path, owner: &str) -> PathBuf {
    parent.join(format!(".{}{LOCK_SUFFIX}", owner_key(owner)))
}

/// The advisory lock that makes one writer the only writer of a directory (see the module
/// documentation for why a lock). Released, and its file removed, when dropped.
#[derive(Debug)]
pub struct TargetLock {
    path: PathBuf,
    file: File,
}

impl TargetLock {
    /// Takes the lock of `<parent>/<owner>`, or returns `None` if another writer holds it.
    pub fn try_acquire(parent: &Path, owner: &str) -> Result<Option<TargetLock>> {
        let path = lock_path(parent, owner);
        loop {
            let mut open = OpenOptions::new();
            open.read(true).write(true).create(true);
            no_follow(&mut open);
            let file = open.open(&path).map_err(|e| Error::io(e, &path))?;
            if !try_flock(&file).map_err(|e| Error::io(e, &path))? {
                return Ok(None);
            }
            // The previous holder may have removed the file between our open and our lock:
            // then we hold a lock on a file nobody else can see. Start again.
            if same_file(&file, &path) {
                return Ok(Some(TargetLock { path, file }));
            }
        }
    }

    /// Takes the lock of `<parent>/<owner>` or fails with a [`ErrorKind::Conflict`] error.
    pub fn acquire(parent: &Path, owner: &str) -> Result<TargetLock> {
        TargetLock::try_acquire(parent, owner)?.ok_or_else(|| {
            Error::new(
                ErrorKind::Conflict,
                format!(
                    "another writer is writing {}; only one writer at a time may write a \
                     partition directory",
                    parent.join(owner).display()
                ),
            )
        })
    }
}

impl Drop for TargetLock {
    fn drop(&mut self) {
        // Remove the file while still holding the lock (see `try_acquire`), then unlock.
        let _ = std::fs::remove_file(&self.path);
        unflock(&self.file);
    }
}

/// `flock(LOCK_EX | LOCK_NB)`: true when taken, false when another open file holds it.
#[cfg(unix)]
fn try_flock(file: &File) -> std::io::Result<bool> {
    use std::os::unix::io::AsRawFd;
    // SAFETY: flock on a descriptor this `File` owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let err = std::io::Error::last_os_error();
    if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(err)
    }
}

#[cfg(unix)]
fn unflock(file: &File) {
    use std::os::unix::io::AsRawFd;
    // SAFETY: as above.
    unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_UN) };
}

// Elsewhere there is no advisory lock: one writer per directory is not enforced.
#[cfg(not(unix))]
fn try_flock(_: &File) -> std::io::Result<bool> {
    Ok(true)
}

#[cfg(not(unix))]
fn unflock(_: &File) {}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_: &File, path: &Path) -> bool {
    path.exists()
}

#[cfg(unix)]
fn no_follow(open: &mut OpenOptions) {
    use std::os::unix::fs::OpenOptionsExt;
    open.custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
}

#[cfg(not(unix))]
fn no_follow(_: &mut OpenOptions) {}

/// Creates a new file in a staging directory: exclusively (never an existing file, never
/// through a link).
pub fn create_new_file(path: &Path) -> Result<File> {
    let mut open = OpenOptions::new();
    open.write(true).create_new(true);
    no_follow(&mut open);
    open.open(path).map_err(|e| Error::io(e, path))
}

/// Removes the staging directories (and lock files) in `parent` that no live writer holds:
/// those a killed writer left. Best effort: what cannot be removed now is left for later.
/// `held` is the owner whose lock the caller holds (its leftovers are stale too).
pub fn clean_stale(parent: &Path, held: Option<&str>) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let path = entry.path();
        if let Some(owner) = staging_dir_owner(name) {
            if held.is_some_and(|h| owner_key(h) == owner) {
                let _ = remove_tree(&path);
            } else if let Ok(Some(_lock)) = TargetLock::try_acquire(parent, owner) {
                let _ = remove_tree(&path);
            }
        } else if is_job_staging_dir_name(name) {
            let age = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok());
            if age.is_some_and(|a| a > JOB_STAGING_MAX_AGE) {
                let _ = remove_tree(&path);
            }
        } else if let Some(owner) = name
            .strip_prefix('.')
            .and_then(|n| n.strip_suffix(LOCK_SUFFIX))
        {
            // A lock file whose holder was killed: taking and dropping the lock removes it.
            if held.is_none_or(|h| owner_key(h) != owner) && !owner.is_empty() {
                let _ = TargetLock::try_acquire(parent, owner);
            }
        }
    }
}

/// Removes a directory tree without following links (a link is removed, not its target).
fn remove_tree(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

pub(crate) fn unique() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{}-{:x}-{}",
        std::process::id(),
        nanos,
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// A staging directory and the lock of the directory it will become. Dropping it unfinished
/// removes the directory and releases the lock.
#[derive(Debug)]
pub struct Staging {
    /// Where the files are written.
    pub dir: PathBuf,
    /// What the staging directory becomes.
    pub target: PathBuf,
    lock: Option<TargetLock>,
    done: bool,
}

impl Staging {
    /// Locks `target` (whose parent must already be resolved, see [`resolve_target`]), checks
    /// what is there, removes stale staging directories in the parent, and creates a fresh
    /// staging directory. `overwrite`: an existing directory at `target` may be replaced.
    pub fn create(target: &Path, overwrite: bool) -> Result<Staging> {
        let name = name_of(target)?.to_string();
        let parent = target.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent).map_err(|e| Error::io(e, parent))?;
        let lock = TargetLock::acquire(parent, &name)?;
        check_target(target, overwrite)?;
        clean_stale(parent, Some(&name));
        let dir = parent.join(staging_dir_name(&name, &unique()));
        // mkdir: fails if anything, a link included, is at the name.
        std::fs::create_dir(&dir).map_err(|e| Error::io(e, &dir))?;
        Ok(Staging {
            dir,
            target: target.to_path_buf(),
            lock: Some(lock),
            done: false,
        })
    }

    /// Moves the staging directory into place (see [`publish`]); the lock is released after.
    pub fn publish(mut self, fsync: bool) -> Result<()> {
        if fsync {
            sync_dir(&self.dir)?;
        }
        rename_into_place(&self.dir, &self.target)?;
        self.done = true;
        if fsync {
            if let Some(parent) = self.target.parent() {
                sync_dir(parent)?;
            }
        }
        self.lock.take();
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.done {
            // An unfinished write leaves nothing behind.
            let _ = remove_tree(&self.dir);
        }
        self.lock.take();
    }
}

/// Creates a staging directory for a job of many tasks that publishes several directories
/// itself (the Spark writer: tasks write in it, the driver publishes with [`publish`] and then
/// removes it): `<parent>/.<tag>.kafkalog-job.<unique>.tmp`, made with `mkdir`. No process
/// holds a lock for it (a job's tasks and its commit run in different processes), so a job
/// whose driver died is recognised by age: the first write in `parent` after
/// [`JOB_STAGING_MAX_AGE`] removes it.
pub fn create_job_staging(parent: &Path, tag: &str) -> Result<PathBuf> {
    validate_topic(tag)?; // a plain, safe name
    let parent = resolve_dir(parent)?;
    std::fs::create_dir_all(&parent).map_err(|e| Error::io(e, &parent))?;
    clean_stale(&parent, None);
    let dir = parent.join(job_staging_dir_name(tag, &unique()));
    std::fs::create_dir(&dir).map_err(|e| Error::io(e, &dir))?;
    Ok(dir)
}

/// What may be at the target: nothing, or (with `overwrite`) a directory, never a link.
fn check_target(target: &Path, overwrite: bool) -> Result<()> {
    match std::fs::symlink_metadata(target) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(e, target)),
        Ok(m) if m.file_type().is_symlink() => refuse_link(target),
        Ok(_) if !overwrite => Err(Error::invalid_argument(format!(
            "{} exists; pass overwrite=True to replace it",
            target.display()
        ))),
        Ok(m) if !m.is_dir() => Err(Error::invalid_argument(format!(
            "{} is not a directory",
            target.display()
        ))),
        Ok(_) => Ok(()),
    }
}

/// Moves a complete directory `staged` to `target` under `target`'s lock: a new directory, or
/// with `overwrite` one replacing the directory there in one atomic swap. For writers that
/// stage elsewhere (the Spark writer's task directories). `staged` must be on the same file
/// system as `target`.
pub fn publish(staged: &Path, target: &Path, overwrite: bool, fsync: bool) -> Result<()> {
    let target = resolve_target(target)?;
    let name = name_of(&target)?.to_string();
    let parent = target.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| Error::io(e, parent))?;
    let _lock = TargetLock::acquire(parent, &name)?;
    check_target(&target, overwrite)?;
    match std::fs::symlink_metadata(staged) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(Error::invalid_argument(format!(
                "{} is not a directory",
                staged.display()
            )))
        }
        Err(e) => return Err(Error::io(e, staged)),
    }
    if fsync {
        sync_dir(staged)?;
    }
    rename_into_place(staged, &target)?;
    if fsync {
        sync_dir(parent)?;
    }
    Ok(())
}

/// Renames `staged` to `target`: exclusively when `target` is absent, by an atomic exchange
/// when a directory is there (whose old contents, left at `staged`, are then removed).
fn rename_into_place(staged: &Path, target: &Path) -> Result<()> {
    let exists = std::fs::symlink_metadata(target).is_ok();
    if !exists {
        return rename_noreplace(staged, target).map_err(|e| Error::io(e, target));
    }
    match rename_exchange(staged, target) {
        Ok(()) => {
            // `staged` now holds the old contents.
            let _ = remove_tree(staged);
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::Unsupported => {
            // No atomic exchange here: move the old directory aside under a staging name (so
            // that a crash in between leaves it recognisable), then the new one in.
            let parent = target.parent().unwrap_or(Path::new("."));
            let old = parent.join(staging_dir_name(name_of(target)?, &unique()));
            std::fs::rename(target, &old).map_err(|e| Error::io(e, target))?;
            if let Err(e) = std::fs::rename(staged, target) {
                let _ = std::fs::rename(&old, target);
                return Err(Error::io(e, target));
            }
            let _ = remove_tree(&old);
            Ok(())
        }
        Err(e) => Err(Error::io(e, target)),
    }
}

#[cfg(target_os = "linux")]
fn renameat2(from: &Path, to: &Path, flags: libc::c_uint) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let from = std::ffi::CString::new(from.as_os_str().as_bytes())?;
    let to = std::ffi::CString::new(to.as_os_str().as_bytes())?;
    // SAFETY: two valid NUL-terminated paths, relative to the current directory.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            flags,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let err = std::io::Error::last_os_error();
    match err.raw_os_error() {
        // The file system (or an old kernel) does not offer the flag.
        Some(libc::EINVAL | libc::ENOSYS) => Err(std::io::ErrorKind::Unsupported.into()),
        _ => Err(err),
    }
}

#[cfg(target_os = "linux")]
fn rename_noreplace(from: &Path, to: &Path) -> std::io::Result<()> {
    match renameat2(from, to, libc::RENAME_NOREPLACE) {
        Err(e) if e.kind() == std::io::ErrorKind::Unsupported => std::fs::rename(from, to),
        other => other,
    }
}

#[cfg(target_os = "linux")]
fn rename_exchange(from: &Path, to: &Path) -> std::io::Result<()> {
    renameat2(from, to, libc::RENAME_EXCHANGE)
}

#[cfg(not(target_os = "linux"))]
fn rename_noreplace(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::rename(from, to)
}

#[cfg(not(target_os = "linux"))]
fn rename_exchange(_: &Path, _: &Path) -> std::io::Result<()> {
    Err(std::io::ErrorKind::Unsupported.into())
}

/// fsyncs a directory, so that the names in it (files created, a rename) survive a power cut.
pub fn sync_dir(dir: &Path) -> Result<()> {
    // Directories can be opened and fsynced on Unix; elsewhere opening one fails, and there is
    // nothing further to do.
    #[cfg(unix)]
    {
        let d = File::open(dir).map_err(|e| Error::io(e, dir))?;
        d.sync_all().map_err(|e| Error::io(e, dir))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::segment::is_staging_dir_name;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("kafkalog-placement-{name}-{}", unique()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn names_from_data_stay_under_the_root() {
        let root = scratch("root");
        let real = std::fs::canonicalize(&root).unwrap();
        assert_eq!(
            partition_dir(&root, "orders", 3).unwrap(),
            real.join("orders-3")
        );
        for bad in ["../escaped", "/tmp/x", "a/b", "..", ".", ""] {
            let e = partition_dir(&root, bad, 0).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidArgument);
        }
        assert!(partition_dir(&root, "orders", -1).is_err());
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/tmp", root.join("evil-0")).unwrap();
            let e = partition_dir(&root, "evil", 0).unwrap_err();
            assert!(e.message.contains("symbolic link"), "{e}");
        }
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn one_writer_at_a_time_and_stale_staging_is_cleaned() {
        let root = scratch("lock");
        let target = root.join("t-0");
        let first = Staging::create(&target, false).unwrap();
        let second = Staging::create(&target, false).unwrap_err();
        assert_eq!(second.kind, ErrorKind::Conflict);
        // A writer of another directory leaves a live staging directory alone.
        let other = Staging::create(&root.join("u-0"), false).unwrap();
        assert!(first.dir.exists());
        drop(other);
        // A killed writer: its staging directory stays, its lock is gone.
        let dir = first.dir.clone();
        let mut killed = first;
        killed.done = true; // as if the process died: nothing removed, the lock file stays
        if let Some(lock) = killed.lock.take() {
            unflock(&lock.file); // the kernel's part of dying
            std::mem::forget(lock);
        }
        drop(killed);
        assert!(root.join(".t-0.kafkalog-lock").exists());
        assert!(dir.exists() && is_staging_dir_name(dir.file_name().unwrap().to_str().unwrap()));
        let next = Staging::create(&root.join("u-0"), false).unwrap();
        assert!(!dir.exists(), "stale staging directory removed");
        next.publish(true).unwrap();
        assert_eq!(names(&root), vec!["u-0"]);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn overwrite_swaps_atomically() {
        let root = scratch("swap");
        let target = root.join("t-0");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("old"), b"old").unwrap();
        assert_eq!(
            Staging::create(&target, false).unwrap_err().kind,
            ErrorKind::InvalidArgument
        );
        let s = Staging::create(&target, true).unwrap();
        std::fs::write(s.dir.join("new"), b"new").unwrap();
        assert!(target.join("old").exists());
        s.publish(true).unwrap();
        assert_eq!(names(&target), vec!["new"]);
        assert_eq!(names(&root), vec!["t-0"]);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn relative_and_missing_roots_resolve() {
        let root = scratch("resolve");
        let deep = root.join("a/b");
        let resolved = resolve_dir(&deep).unwrap();
        assert_eq!(resolved, std::fs::canonicalize(&root).unwrap().join("a/b"));
        assert!(resolve_dir(&root.join("missing/../x")).is_err());
        std::fs::remove_dir_all(&root).unwrap();
    }
}

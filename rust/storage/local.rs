//! Local files. A `file://` URI is read as the path it names.

use super::{already_exists, Entry, Object, PutMode, Stat, Storage};
use crate::error::{Error, Result};
use std::fs::File;
use std::io::Write;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// The local file system.
#[derive(Clone, Copy, Debug, Default)]
pub struct Local;

/// The path a local location names (`file:///x` is `/x`).
pub fn local(path: &Path) -> PathBuf {
    match path.to_str().and_then(|s| s.strip_prefix("file://")) {
        Some(rest) => PathBuf::from(rest),
        None => path.to_path_buf(),
    }
}

impl Local {
    /// The path a local location names (`file:///x` is `/x`).
    pub fn local_path_of(path: &Path) -> PathBuf {
        local(path)
    }
}

impl Storage for Local {
    fn stat(&self, path: &Path) -> Result<Stat> {
        match std::fs::metadata(local(path)) {
            Ok(m) if m.is_dir() => Ok(Stat::Dir),
            Ok(m) => Ok(Stat::File { size: m.len() }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Stat::Missing),
            Err(e) => Err(Error::io(e, path)),
        }
    }

    fn list(&self, dir: &Path) -> Result<Vec<Entry>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(local(dir)).map_err(|e| Error::io(e, dir))? {
            let entry = entry.map_err(|e| Error::io(e, dir))?;
            // Follow symlinks as a broker does (a log directory may link its partitions).
            let Ok(meta) = std::fs::metadata(entry.path()) else {
                continue; // a dangling link, or gone since the listing
            };
            out.push(Entry {
                path: dir.join(entry.file_name()),
                is_dir: meta.is_dir(),
                size: meta.len(),
            });
        }
        Ok(out)
    }

    fn open(&self, path: &Path) -> Result<Box<dyn Object>> {
        let file = File::open(local(path)).map_err(|e| Error::io(e, path))?;
        let meta = file.metadata().map_err(|e| Error::io(e, path))?;
        if meta.is_dir() {
            return Err(Error::invalid_argument("a directory, not a file").with_path(path));
        }
        Ok(Box::new(LocalFile {
            file,
            len: meta.len(),
            at: 0,
            path: path.to_path_buf(),
        }))
    }

    fn read(&self, path: &Path) -> Result<Option<Vec<u8>>> {
        match std::fs::read(local(path)) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(e, path)),
        }
    }

    fn local_path(&self, path: &Path) -> Option<PathBuf> {
        Some(local(path))
    }

    fn put(&self, path: &Path, bytes: Vec<u8>, mode: PutMode) -> Result<()> {
        let target = local(path);
        if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(e, path))?;
        }
        match mode {
            PutMode::Create => {
                let mut file = match std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&target)
                {
                    Ok(file) => file,
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                        return Err(already_exists(path))
                    }
                    Err(e) => return Err(Error::io(e, path)),
                };
                file.write_all(&bytes).map_err(|e| Error::io(e, path))?;
                file.sync_all().map_err(|e| Error::io(e, path))
            }
            PutMode::Overwrite => {
                // Beside the target, then renamed over it: never half an object.
                let name = target.file_name().map(|n| n.to_string_lossy().into_owned());
                let tmp = target.with_file_name(format!(
                    ".{}.{}.tmp",
                    name.unwrap_or_default(),
                    std::process::id()
                ));
                std::fs::write(&tmp, &bytes).map_err(|e| Error::io(e, path))?;
                std::fs::rename(&tmp, &target).map_err(|e| {
                    let _ = std::fs::remove_file(&tmp);
                    Error::io(e, path)
                })
            }
        }
    }

    fn upload(&self, path: &Path, from: &Path) -> Result<()> {
        let target = local(path);
        let name = target.file_name().map(|n| n.to_string_lossy().into_owned());
        let tmp = target.with_file_name(format!(
            ".{}.{}.tmp",
            name.unwrap_or_default(),
            std::process::id()
        ));
        std::fs::copy(from, &tmp).map_err(|e| Error::io(e, path))?;
        std::fs::rename(&tmp, &target).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            Error::io(e, path)
        })
    }

    fn delete(&self, path: &Path) -> Result<()> {
        match std::fs::remove_file(local(path)) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(e, path)),
            _ => Ok(()),
        }
    }
}

struct LocalFile {
    file: File,
    len: u64,
    /// Where the file's cursor is, to skip a seek on sequential reads.
    at: u64,
    path: PathBuf,
}

impl Object for LocalFile {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_into(&mut self, offset: u64, len: usize, out: &mut Vec<u8>) -> Result<usize> {
        let take = (len as u64).min(self.len.saturating_sub(offset));
        if take == 0 {
            return Ok(0);
        }
        if offset != self.at {
            self.file
                .seek(SeekFrom::Start(offset))
                .map_err(|e| Error::io(e, &self.path))?;
            self.at = offset;
        }
        out.reserve(take as usize);
        // Reads into the spare capacity: no zeroing first.
        let n = (&mut self.file)
            .take(take)
            .read_to_end(out)
            .map_err(|e| Error::io(e, &self.path))?;
        self.at += n as u64;
        Ok(n)
    }
}

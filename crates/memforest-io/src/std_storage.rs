//! [`StdStorage`]: the real filesystem through `std::fs`.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use crate::storage::{ImmutableFile, Storage, WritableFile};

/// The real filesystem (`std::fs`); the default [`Storage`] everywhere.
#[derive(Debug, Clone, Copy, Default)]
pub struct StdStorage;

/// An OS file opened for appending.
#[derive(Debug)]
struct StdFile(File);

impl Write for StdFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

impl WritableFile for StdFile {
    fn sync_data(&self) -> io::Result<()> {
        self.0.sync_data()
    }

    fn sync_all(&self) -> io::Result<()> {
        self.0.sync_all()
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }

    fn current_len(&self) -> io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }
}

fn open(options: &OpenOptions, path: &Path) -> io::Result<Box<dyn WritableFile>> {
    Ok(Box::new(StdFile(options.open(path)?)))
}

impl Storage for StdStorage {
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        open(OpenOptions::new().append(true).create_new(true), path)
    }

    fn create(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        // `O_APPEND` cannot be combined with truncation; a fresh file written only by this
        // handle appends anyway.
        open(
            OpenOptions::new().write(true).create(true).truncate(true),
            path,
        )
    }

    fn open_append(&self, path: &Path) -> io::Result<Box<dyn WritableFile>> {
        open(OpenOptions::new().append(true), path)
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        fs::read(path)
    }

    fn read_at(&self, path: &Path, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let mut file = File::open(path)?;
        file.seek(SeekFrom::Start(offset))?;
        file.read_exact(buf)
    }

    fn open_immutable(&self, path: &Path) -> io::Result<ImmutableFile> {
        File::open(path).map(ImmutableFile::Os)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }

    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in fs::read_dir(dir)? {
            // Names that are not UTF-8 are never MemForest's own files.
            if let Ok(name) = entry?.file_name().into_string() {
                names.push(name);
            }
        }
        Ok(names)
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        fs::create_dir_all(dir)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn file_len(&self, path: &Path) -> io::Result<u64> {
        Ok(fs::metadata(path)?.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_through_the_real_filesystem() {
        let dir = tempfile::tempdir().unwrap();
        let s = StdStorage;
        let a = dir.path().join("a");
        let mut f = s.create_new(&a).unwrap();
        f.write_all(b"hello world").unwrap();
        f.sync_data().unwrap();
        assert_eq!(f.current_len().unwrap(), 11);
        assert!(s.create_new(&a).is_err(), "create_new must not replace");
        f.set_len(5).unwrap();
        drop(f);
        let mut f = s.open_append(&a).unwrap();
        f.write_all(b"!").unwrap();
        drop(f);
        assert_eq!(s.read(&a).unwrap(), b"hello!");
        let mut two = [0u8; 2];
        s.read_at(&a, 3, &mut two).unwrap();
        assert_eq!(&two, b"lo");
        let b = dir.path().join("sub/b");
        s.create_dir_all(b.parent().unwrap()).unwrap();
        s.rename(&a, &b).unwrap();
        s.sync_dir(dir.path()).unwrap();
        assert!(!s.exists(&a) && s.exists(&b));
        assert_eq!(s.file_len(&b).unwrap(), 6);
        assert_eq!(
            s.list_dir(b.parent().unwrap()).unwrap(),
            vec!["b".to_string()]
        );
        assert!(matches!(
            s.open_immutable(&b).unwrap(),
            ImmutableFile::Os(_)
        ));
        let mut t = s.create(&b).unwrap();
        t.write_all(b"new").unwrap();
        t.sync_all().unwrap();
        assert_eq!(s.read(&b).unwrap(), b"new", "create truncates");
        s.remove_file(&b).unwrap();
        assert_eq!(s.read(&b).unwrap_err().kind(), io::ErrorKind::NotFound);
    }
}

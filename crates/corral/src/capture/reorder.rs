//! Putting a capped capture back in order, in place, in bounded memory.
//!
//! Past its cap a capture file holds its head as written, then a ring whose oldest byte
//! sits somewhere in the middle of it. When the stream ends the file is rewritten to read
//! in order: the head, a marker line, the ring rotated so that its oldest byte comes
//! first. The ring may be hundreds of megabytes, so it is rotated where it lies, by three
//! reversals of file ranges, each done a block from either end at a time: memory stays at
//! two blocks whatever the size, and the disk never holds more than the file plus the
//! marker.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// Bytes moved per read or write.
const BLOCK: usize = 64 * 1024;

/// Make `file`'s range `[start, start + len)` read in order when its first `k` bytes are
/// the newest (its oldest byte is at `start + k`), and insert `marker` before it, moving
/// it `marker.len()` bytes later. The file grows by the marker.
///
/// The marker's room is claimed first, so a full disk fails before anything moved.
pub(crate) fn rotate_and_mark(
    file: &File,
    start: u64,
    len: u64,
    k: u64,
    marker: &[u8],
) -> io::Result<()> {
    let m = marker.len() as u64;
    file.write_all_at(&vec![0; marker.len()], start + len)?;
    if k > 0 && k < len {
        reverse(file, start, start + k)?;
        reverse(file, start + k, start + len)?;
        reverse(file, start, start + len)?;
    }
    shift_later(file, start, len, m)?;
    file.write_all_at(marker, start)
}

/// Reverse the bytes of `[from, to)`.
fn reverse(file: &File, mut from: u64, mut to: u64) -> io::Result<()> {
    let mut a = vec![0u8; BLOCK];
    let mut b = vec![0u8; BLOCK];
    while to - from >= 2 * BLOCK as u64 {
        file.read_exact_at(&mut a, from)?;
        file.read_exact_at(&mut b, to - BLOCK as u64)?;
        a.reverse();
        b.reverse();
        file.write_all_at(&b, from)?;
        file.write_all_at(&a, to - BLOCK as u64)?;
        from += BLOCK as u64;
        to -= BLOCK as u64;
    }
    // Less than two blocks remain: reverse them in one piece.
    let mut rest = vec![0u8; (to - from) as usize];
    file.read_exact_at(&mut rest, from)?;
    rest.reverse();
    file.write_all_at(&rest, from)
}

/// Move `[start, start + len)` to `[start + by, start + len + by)`, last block first so
/// nothing is overwritten before it is read.
fn shift_later(file: &File, start: u64, len: u64, by: u64) -> io::Result<()> {
    if by == 0 {
        return Ok(());
    }
    let mut buf = vec![0u8; BLOCK];
    let mut end = start + len;
    while end > start {
        let n = (end - start).min(BLOCK as u64) as usize;
        let from = end - n as u64;
        file.read_exact_at(&mut buf[..n], from)?;
        file.write_all_at(&buf[..n], from + by)?;
        end = from;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        // Each case writes and rotates a file of up to three blocks.
        #![proptest_config(ProptestConfig::with_cases(32))]

        #[test]
        fn any_rotation_comes_out_in_order(
            data in proptest::collection::vec(any::<u8>(), 1..(3 * BLOCK + 17)),
            k_seed in any::<u64>(),
            lead in 0usize..9,
        ) {
            let dir = tempfile::tempdir().unwrap();
            let file = std::fs::OpenOptions::new()
                .read(true).write(true).create(true).truncate(true)
                .open(dir.path().join("c")).unwrap();
            let k = (k_seed % data.len() as u64) as usize;
            // The newest `k` bytes first, then the oldest: what a ring leaves.
            let ring = [&data[data.len() - k..], &data[..data.len() - k]].concat();
            let head = vec![b'h'; lead];
            file.write_all_at(&head, 0).unwrap();
            file.write_all_at(&ring, lead as u64).unwrap();
            rotate_and_mark(&file, lead as u64, data.len() as u64, k as u64, b"<m>").unwrap();
            let got = std::fs::read(dir.path().join("c")).unwrap();
            prop_assert_eq!(got, [&head[..], b"<m>", &data[..]].concat());
        }
    }
}

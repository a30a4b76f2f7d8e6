//! Candidate descriptions: small edits of the current sequence, built into
//! full candidates only when they are filtered and tested.

/// How the tail of the sequence is adjusted after a deletion of `k` bytes.
///
/// `arbitrary` reads the byte length of a non-last `String`/`Vec<u8>` from
/// the *end* of the data (one byte while at most 256 bytes remain, two
/// big-endian bytes up to 65 537); deleting `k` bytes of such a field keeps
/// it consistent only if that length drops by `k` too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Tail {
    /// Leave the tail alone.
    Keep,
    /// Lower the last byte by `k`.
    One,
    /// Lower the last two bytes, read big-endian, by `k`.
    Two,
}

/// A candidate: overwrite some bytes of the current sequence, then delete a
/// range (positions refer to the current sequence), then adjust the tail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Edit {
    writes: Vec<(usize, Vec<u8>)>,
    delete: Option<(usize, usize)>,
    /// One more byte deleted, after the range: the high byte of a length
    /// field that narrows from two bytes to one (`leaves.rs`).
    drop: Option<usize>,
    tail: Tail,
}

impl Edit {
    /// Deletes `lo..hi`.
    pub(crate) fn delete(lo: usize, hi: usize) -> Edit {
        Edit {
            writes: Vec::new(),
            delete: Some((lo, hi)),
            drop: None,
            tail: Tail::Keep,
        }
    }

    /// Writes `bytes` at `at`.
    pub(crate) fn write(at: usize, bytes: Vec<u8>) -> Edit {
        Edit {
            writes: vec![(at, bytes)],
            delete: None,
            drop: None,
            tail: Tail::Keep,
        }
    }

    /// Writes `len` zero bytes at `at`.
    pub(crate) fn zero(at: usize, len: usize) -> Edit {
        Edit::write(at, vec![0; len])
    }

    /// No change yet; add writes and a deletion.
    pub(crate) fn empty() -> Edit {
        Edit {
            writes: Vec::new(),
            delete: None,
            drop: None,
            tail: Tail::Keep,
        }
    }

    /// Also writes `bytes` at `at` (after the writes already present).
    pub(crate) fn and_write(mut self, at: usize, bytes: Vec<u8>) -> Edit {
        self.writes.push((at, bytes));
        self
    }

    /// Also deletes `lo..hi` (replacing any deletion already present).
    pub(crate) fn and_delete(mut self, lo: usize, hi: usize) -> Edit {
        self.delete = (lo < hi).then_some((lo, hi));
        self
    }

    /// Also deletes the byte at `at`, which must come after the deleted
    /// range.
    pub(crate) fn and_drop(mut self, at: usize) -> Edit {
        self.drop = Some(at);
        self
    }

    /// The same edit with a different tail adjustment.
    pub(crate) fn with_tail(mut self, tail: Tail) -> Edit {
        self.tail = tail;
        self
    }

    /// The writes, in order: `(position, bytes)`.
    pub(crate) fn writes(&self) -> &[(usize, Vec<u8>)] {
        &self.writes
    }

    /// The range deleted, if any.
    pub(crate) fn deletion(&self) -> Option<(usize, usize)> {
        self.delete
    }

    /// The byte deleted besides the range, if any.
    pub(crate) fn dropped(&self) -> Option<usize> {
        self.drop
    }

    /// The tail adjustment.
    pub(crate) fn tail(&self) -> Tail {
        self.tail
    }

    /// Bytes deleted.
    fn deleted(&self) -> usize {
        self.delete.map_or(0, |(lo, hi)| hi - lo) + usize::from(self.drop.is_some())
    }

    /// This edit plus its tail-adjusted variants that make sense on
    /// `current`: the last byte (or the last two, big-endian, when the
    /// sequence stays longer than 256 bytes) lowered by the number of
    /// deleted bytes, if it survives the deletion and is large enough.
    pub(crate) fn with_tails(self, current: &[u8]) -> Vec<Edit> {
        let k = self.deleted();
        let mut out = Vec::with_capacity(3);
        if k > 0 {
            for tail in [Tail::One, Tail::Two] {
                let variant = self.clone().with_tail(tail);
                if variant.tail_applies(current) {
                    out.push(variant);
                }
            }
        }
        out.insert(0, self);
        out
    }

    /// Whether the tail adjustment can be made on `current`.
    fn tail_applies(&self, current: &[u8]) -> bool {
        let mut out = Vec::new();
        self.apply(current, &mut out)
    }

    /// Writes the candidate into `out` (cleared first). `false` (and `out`
    /// unspecified) when the edit does not fit `current`: a write or
    /// deletion out of range, or a tail too small to lower.
    pub(crate) fn apply(&self, current: &[u8], out: &mut Vec<u8>) -> bool {
        out.clear();
        out.extend_from_slice(current);
        for (at, bytes) in &self.writes {
            let Some(target) = out.get_mut(*at..*at + bytes.len()) else {
                return false;
            };
            target.copy_from_slice(bytes);
        }
        let k = self.deleted();
        if let Some(at) = self.drop {
            if at >= out.len() || self.delete.is_some_and(|(_, hi)| at < hi) {
                return false;
            }
            out.remove(at);
        }
        if let Some((lo, hi)) = self.delete {
            if lo > hi || hi > out.len() {
                return false;
            }
            // The tail bytes must survive the deletion.
            let needed = match self.tail {
                Tail::Keep => 0,
                Tail::One => 1,
                Tail::Two => 2,
            };
            if needed > 0 && hi + needed > out.len() {
                return false;
            }
            out.drain(lo..hi);
        }
        let n = out.len();
        match self.tail {
            Tail::Keep => true,
            Tail::One => match out
                .last()
                .and_then(|&b| b.checked_sub(u8::try_from(k).ok()?))
            {
                Some(lowered) if k > 0 => {
                    out[n - 1] = lowered;
                    true
                }
                _ => false,
            },
            Tail::Two => {
                if n < 2 || n <= 256 || k == 0 {
                    return false;
                }
                let value = u16::from_be_bytes([out[n - 2], out[n - 1]]);
                match value.checked_sub(u16::try_from(k).unwrap_or(u16::MAX)) {
                    Some(lowered) => {
                        out[n - 2..].copy_from_slice(&lowered.to_be_bytes());
                        true
                    }
                    None => false,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(edit: &Edit, current: &[u8]) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        edit.apply(current, &mut out).then_some(out)
    }

    #[test]
    fn writes_then_deletes() {
        let e = Edit::write(1, vec![9, 9]).and_delete(3, 5);
        assert_eq!(applied(&e, &[0, 1, 2, 3, 4, 5]), Some(vec![0, 9, 9, 5]));
        assert_eq!(applied(&Edit::zero(5, 2), &[1; 6]), None);
        assert_eq!(applied(&Edit::delete(2, 7), &[1; 6]), None);
    }

    #[test]
    fn tail_variants_lower_the_length_field() {
        // A 1-byte length 5 at the end; deleting 2 bytes of the field.
        let current = [b'a', b'b', b'c', b'd', b'e', 5];
        let edits = Edit::delete(1, 3).with_tails(&current);
        assert_eq!(edits.len(), 2, "no 2-byte variant below 257 bytes");
        assert_eq!(
            applied(&edits[1], &current),
            Some(vec![b'a', b'd', b'e', 3])
        );
        // The last byte too small, or deleted: no variant.
        assert_eq!(Edit::delete(0, 3).with_tails(&[1, 1, 1, 2]).len(), 1);
        assert_eq!(Edit::delete(2, 4).with_tails(&[1, 1, 9, 9]).len(), 1);
        // Two bytes, big-endian, on long sequences.
        let mut long = vec![7; 300];
        long[298] = 1;
        long[299] = 0;
        let edits = Edit::delete(0, 3).with_tails(&long);
        assert_eq!(edits.len(), 2, "last byte 0 cannot be lowered");
        let out = applied(&edits[1], &long).unwrap();
        assert_eq!(out.len(), 297);
        assert_eq!(out[295..], [0, 253]);
    }
}

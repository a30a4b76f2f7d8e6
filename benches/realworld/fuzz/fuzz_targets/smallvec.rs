#![no_main]
//! smallvec 1.6.0 driven by a typed sequence of operations (`arbitrary`),
//! checked against a `Vec` doing the same. Its known bug: RUSTSEC-2021-0003,
//! `insert_many` with an iterator that yields more items than its size
//! hint's lower bound writes past the buffer (fixed in 1.6.1).

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use smallvec::SmallVec;

#[derive(Arbitrary, Debug)]
enum Op {
    Push(u32),
    Pop,
    Insert(u16, u32),
    Remove(u16),
    SwapRemove(u16),
    Truncate(u16),
    Reserve(u8),
    ShrinkToFit,
    /// Items from an exact-size iterator.
    InsertMany(u16, Vec<u32>),
    /// The items whose bits in the mask are clear, through a filter (its
    /// size hint's lower bound is 0).
    InsertManyFiltered(u16, Vec<u32>, u32),
    Extend(Vec<u32>),
    Retain(u32),
    Dedup,
    Drain(u16, u16),
    Clear,
}

fuzz_target!(|ops: Vec<Op>| {
    let mut v: SmallVec<[u32; 4]> = SmallVec::new();
    let mut model: Vec<u32> = Vec::new();
    for op in ops {
        let len = model.len();
        match op {
            Op::Push(x) => {
                v.push(x);
                model.push(x);
            }
            Op::Pop => assert_eq!(v.pop(), model.pop()),
            Op::Insert(i, x) => {
                let i = usize::from(i) % (len + 1);
                v.insert(i, x);
                model.insert(i, x);
            }
            Op::Remove(i) if len > 0 => {
                let i = usize::from(i) % len;
                assert_eq!(v.remove(i), model.remove(i));
            }
            Op::SwapRemove(i) if len > 0 => {
                let i = usize::from(i) % len;
                assert_eq!(v.swap_remove(i), model.swap_remove(i));
            }
            Op::Remove(_) | Op::SwapRemove(_) => {}
            Op::Truncate(n) => {
                v.truncate(n.into());
                model.truncate(n.into());
            }
            Op::Reserve(n) => {
                v.reserve(n.into());
                assert!(v.capacity() >= len + usize::from(n));
            }
            Op::ShrinkToFit => v.shrink_to_fit(),
            Op::InsertMany(i, xs) => {
                let i = usize::from(i) % (len + 1);
                v.insert_many(i, xs.clone());
                model.splice(i..i, xs);
            }
            Op::InsertManyFiltered(i, xs, mask) => {
                let i = usize::from(i) % (len + 1);
                let keep = move |x: &u32| x & mask == 0;
                v.insert_many(i, xs.clone().into_iter().filter(keep));
                model.splice(i..i, xs.into_iter().filter(keep));
            }
            Op::Extend(xs) => {
                v.extend(xs.iter().copied());
                model.extend(xs);
            }
            Op::Retain(mask) => {
                v.retain(|x| *x & mask == 0);
                model.retain(|x| *x & mask == 0);
            }
            Op::Dedup => {
                v.dedup();
                model.dedup();
            }
            Op::Drain(a, b) => {
                let (a, b) = (usize::from(a) % (len + 1), usize::from(b) % (len + 1));
                let (a, b) = (a.min(b), a.max(b));
                assert!(v.drain(a..b).eq(model.drain(a..b)));
            }
            Op::Clear => {
                v.clear();
                model.clear();
            }
        }
        assert_eq!(&v[..], &model[..]);
    }
});

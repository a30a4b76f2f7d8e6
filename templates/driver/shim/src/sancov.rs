//! SanitizerCoverage hooks and 8-bit counters.
//!
//! cargo-fuzz instruments targets with inline 8-bit counters, a PC table,
//! comparison tracing and (on Linux) stack-depth tracking; libFuzzer's
//! runtime defines the hooks that instrumentation calls. The driver has no
//! libFuzzer: with a sanitizer, its runtime provides weak no-op hooks; without
//! one they are defined here. Either way the counter arrays are collected
//! here (`__sanitizer_cov_8bit_counters_init`), so that a coverage request
//! (`C`) can report each input's features as libFuzzer counts them.

use std::sync::Mutex;

/// SanitizerCoverage inline 8-bit counter arrays, one per instrumented
/// module, registered at start-up.
static COUNTERS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

/// Called by every instrumented module's constructor with its counters.
///
/// # Safety
/// `start..end` must be a counter array that lives as long as the process.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __sanitizer_cov_8bit_counters_init(start: *mut u8, end: *mut u8) {
    if start < end {
        if let Ok(mut c) = COUNTERS.lock() {
            c.push((start as usize, end as usize));
        }
    }
}

/// SanitizerCoverage PC tables (`-sanitizer-coverage-pc-table`), one per
/// instrumented module, registered at start-up in the counters' order: entry
/// `i` (a PC and a flags word) is the code of counter `i`.
static PCS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

/// Called by every instrumented module's constructor with its PC table.
/// Kept so that an explanation can name the source lines of counters
/// ([`pc_offsets`]).
///
/// # Safety
/// `start..end` must be a PC table that lives as long as the process.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __sanitizer_cov_pcs_init(start: *const usize, end: *const usize) {
    if start < end {
        if let Ok(mut p) = PCS.lock() {
            p.push((start as usize, end as usize));
        }
    }
}

/// Each counter's code address as an offset into the object it is in (as a
/// sanitizer prints `binary+0x…`), in the counters' order; empty when the
/// build has no PC table or its entries do not match the `counters`
/// counters one for one.
pub fn pc_offsets(counters: usize) -> Vec<u64> {
    let tables = PCS.lock().map(|p| p.clone()).unwrap_or_default();
    let word = std::mem::size_of::<usize>();
    let mut out = Vec::with_capacity(counters);
    for (start, end) in tables {
        let entries = (end - start) / (2 * word);
        let mut base = None;
        for i in 0..entries {
            let pc = unsafe { *((start + 2 * i * word) as *const usize) };
            let base = *base.get_or_insert_with(|| object_base(pc));
            out.push(pc.saturating_sub(base) as u64);
        }
    }
    if out.len() != counters {
        out.clear();
    }
    out
}

/// Where the object holding `pc` was loaded (`dladdr`); 0 if unknown.
fn object_base(pc: usize) -> usize {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    if unsafe { libc::dladdr(pc as *const libc::c_void, &mut info) } != 0 {
        info.dli_fbase as usize
    } else {
        0
    }
}

/// Indirect-call tracing (`-sanitizer-coverage-level=4`): libFuzzer feeds it
/// to value profiling only (`-use_value_profile`, off by default), so
/// features do not depend on it.
#[unsafe(no_mangle)]
pub extern "C" fn __sanitizer_cov_trace_pc_indir(_callee: usize) {}

/// Comparison tracing (`-sanitizer-coverage-trace-compares`) feeds
/// libFuzzer's mutation dictionaries and value profile, never its features.
/// Its hooks are defined here all the same (overriding a sanitizer runtime's
/// weak no-ops), to do the work libFuzzer's do: record the operands in a
/// table of recent compares and set two value-profile bits per comparison
/// (`TracePC::HandleCmp`). That work is a large share of a comparison-heavy
/// target's time in the real binary (cpp_demangle 0.2: 2.2 times the run
/// without it), and a timeout is judged by the clock: with it, an input runs
/// about as long here as under `cargo fuzz run`, so a timeout artifact that
/// libFuzzer reports reproduces here and a reduced one is not held to a
/// longer run than libFuzzer needs. [`set_faithful_compares`] turns it off
/// where no clock matters (a crash's reduction: speed).
pub mod trace {
    use std::cell::UnsafeCell;
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

    static ON: AtomicBool = AtomicBool::new(true);

    /// Whether comparisons cost what they cost under libFuzzer (the default).
    pub fn set_faithful_compares(on: bool) {
        ON.store(on, Relaxed);
    }

    pub fn faithful_compares() -> bool {
        ON.load(Relaxed)
    }

    /// libFuzzer's tables: 2^16 value-profile bits, 32 recent compares of
    /// each width. Written without synchronisation, as libFuzzer's are;
    /// never read.
    struct Tables {
        bits: UnsafeCell<[u64; (1 << 16) / 64]>,
        recent4: UnsafeCell<[(u32, u32); 32]>,
        recent8: UnsafeCell<[(u64, u64); 32]>,
        recent_words: UnsafeCell<[([u8; 64], [u8; 64]); 32]>,
    }
    unsafe impl Sync for Tables {}
    static TABLES: Tables = Tables {
        bits: UnsafeCell::new([0; (1 << 16) / 64]),
        recent4: UnsafeCell::new([(0, 0); 32]),
        recent8: UnsafeCell::new([(0, 0); 32]),
        recent_words: UnsafeCell::new([([0; 64], [0; 64]); 32]),
    };

    #[inline(always)]
    fn add_value(v: u64) {
        let i = (v % (1 << 16)) as usize;
        unsafe {
            let w = &mut (*TABLES.bits.get())[i / 64];
            *w = std::ptr::read_volatile(w) | (1 << (i % 64));
        }
    }

    /// `TracePC::HandleCmp`, with a site number standing in for the
    /// caller's PC (which stable Rust cannot read): the same work per call.
    #[inline(always)]
    fn handle(site: u64, a: u64, b: u64, width: u32) {
        if !ON.load(Relaxed) {
            return;
        }
        let xor = a ^ b;
        unsafe {
            let slot = (xor % 32) as usize;
            match width {
                4 => std::ptr::write_volatile(&mut (*TABLES.recent4.get())[slot], (a as u32, b as u32)),
                8 => std::ptr::write_volatile(&mut (*TABLES.recent8.get())[slot], (a, b)),
                _ => {}
            }
        }
        let hamming = u64::from(xor.count_ones());
        let distance = if a == b { 0 } else { u64::from(a.wrapping_sub(b).leading_zeros()) + 1 };
        let pc = site.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
        add_value(pc.wrapping_mul(128).wrapping_add(hamming));
        add_value(pc.wrapping_mul(128).wrapping_add(64 + distance));
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_cmp1(a: u8, b: u8) {
        handle(1, a.into(), b.into(), 1)
    }
    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_cmp2(a: u16, b: u16) {
        handle(2, a.into(), b.into(), 2)
    }
    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_cmp4(a: u32, b: u32) {
        handle(4, a.into(), b.into(), 4)
    }
    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_cmp8(a: u64, b: u64) {
        handle(8, a, b, 8)
    }
    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_const_cmp1(a: u8, b: u8) {
        handle(11, a.into(), b.into(), 1)
    }
    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_const_cmp2(a: u16, b: u16) {
        handle(12, a.into(), b.into(), 2)
    }
    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_const_cmp4(a: u32, b: u32) {
        handle(14, a.into(), b.into(), 4)
    }
    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_const_cmp8(a: u64, b: u64) {
        handle(18, a, b, 8)
    }
    /// libFuzzer skips switches over small values and compares the value
    /// with its two neighbouring cases.
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn __sanitizer_cov_trace_switch(val: u64, cases: *const u64) {
        if !ON.load(Relaxed) || cases.is_null() {
            return;
        }
        let n = unsafe { *cases } as usize;
        if n == 0 {
            return;
        }
        let vals = unsafe { std::slice::from_raw_parts(cases.add(2), n) };
        if vals[n - 1] < 256 || val < 256 {
            return;
        }
        let (mut smaller, mut larger, mut i) = (0, u64::MAX, 0);
        while i < n {
            if val < vals[i] {
                larger = vals[i];
                break;
            }
            if val > vals[i] {
                smaller = vals[i];
            }
            i += 1;
        }
        handle(20 + 2 * i as u64, val, smaller, 8);
        handle(21 + 2 * i as u64, val, larger, 8);
    }
    /// A sanitizer's `memcmp`/`bcmp`/`strncmp`/`strcmp` interceptors call
    /// these; libFuzzer's record the first 64 bytes of unequal operands
    /// (`TracePC::AddValueForMemcmp`).
    #[inline(always)]
    fn memcmp_like(s1: *const u8, s2: *const u8, n: usize, result: i32, stop_at_zero: bool) {
        if !ON.load(Relaxed) || result == 0 || n <= 1 || s1.is_null() || s2.is_null() {
            return;
        }
        let len = n.min(64);
        let (mut b1, mut b2) = ([0u8; 64], [0u8; 64]);
        unsafe {
            std::ptr::copy_nonoverlapping(s1, b1.as_mut_ptr(), len);
            std::ptr::copy_nonoverlapping(s2, b2.as_mut_ptr(), len);
        }
        let mut hash = 0usize;
        for i in 0..len {
            hash ^= (usize::from(b1[i]) << 8) | usize::from(b2[i]);
        }
        let mut i = 0;
        let mut hamming = 0;
        while i < len {
            if b1[i] != b2[i] || (stop_at_zero && b1[i] == 0) {
                hamming = (b1[i] ^ b2[i]).count_ones() as usize;
                break;
            }
            i += 1;
        }
        let idx = ((s1 as usize) & 4095 | (i << 12)) + hamming;
        add_value(idx as u64);
        let slot = (idx ^ hash) % 32;
        unsafe {
            let words = &mut *TABLES.recent_words.get();
            words[slot].0[..len].copy_from_slice(&b1[..len]);
            words[slot].1[..len].copy_from_slice(&b2[..len]);
        }
    }

    #[cfg(rc_any_sanitizer)]
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn __sanitizer_weak_hook_memcmp(
        _pc: *const u8,
        s1: *const u8,
        s2: *const u8,
        n: usize,
        result: i32,
    ) {
        memcmp_like(s1, s2, n, result, false)
    }
    #[cfg(rc_any_sanitizer)]
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn __sanitizer_weak_hook_strncmp(
        _pc: *const u8,
        s1: *const u8,
        s2: *const u8,
        n: usize,
        result: i32,
    ) {
        if s1.is_null() || s2.is_null() {
            return;
        }
        // libFuzzer bounds the length by the shorter string.
        let mut len = 0;
        while len < n && len < 64 && unsafe { *s1.add(len) != 0 && *s2.add(len) != 0 } {
            len += 1;
        }
        memcmp_like(s1, s2, len + 1, result, true)
    }
    #[cfg(rc_any_sanitizer)]
    #[unsafe(no_mangle)]
    pub unsafe extern "C" fn __sanitizer_weak_hook_strcmp(
        pc: *const u8,
        s1: *const u8,
        s2: *const u8,
        result: i32,
    ) {
        unsafe { __sanitizer_weak_hook_strncmp(pc, s1, s2, 64, result) }
    }

    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_div4(val: u32) {
        handle(30, val.into(), 0, 4)
    }
    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_div8(val: u64) {
        handle(31, val, 0, 8)
    }
    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_gep(idx: usize) {
        handle(32, idx as u64, 0, 8)
    }
}

/// Stack-depth tracing (`-sanitizer-coverage-stack-depth`, which cargo-fuzz
/// passes on Linux): every instrumented function lowers the thread-local
/// `__sancov_lowest_stack` to its stack pointer. libFuzzer sets it to the
/// stack pointer before each input and counts how deep the input went as
/// one more feature ([`stack_depth_feature`]). In the coverage build (no
/// sanitizer, stable) the variable is ours: a thread-local defined in
/// assembly (`#[thread_local]` is nightly-only), read and written through
/// the thread pointer, as the instrumented code reaches it (initial-exec TLS
/// of the executable). With a sanitizer its runtime defines the variable.
#[cfg(rc_any_sanitizer)]
pub mod stack_depth {
    unsafe extern "C" {
        #[thread_local]
        static mut __sancov_lowest_stack: usize;
    }

    #[inline(always)]
    pub fn record_initial() -> usize {
        let marker = 0u8;
        let sp = std::ptr::addr_of!(marker) as usize;
        unsafe { __sancov_lowest_stack = sp };
        sp
    }

    pub fn max_offset(initial: usize) -> usize {
        initial.saturating_sub(unsafe { __sancov_lowest_stack })
    }
}

#[cfg(all(rc_no_sanitizer, target_os = "linux", target_arch = "x86_64"))]
pub mod stack_depth {
    std::arch::global_asm!(
        ".pushsection .tbss.__sancov_lowest_stack,\"awT\",@nobits",
        ".globl __sancov_lowest_stack",
        ".type __sancov_lowest_stack,@object",
        ".p2align 3",
        "__sancov_lowest_stack:",
        ".zero 8",
        ".size __sancov_lowest_stack, 8",
        ".popsection",
    );

    #[inline(always)]
    pub fn record_initial() -> usize {
        let marker = 0u8;
        let sp = std::ptr::addr_of!(marker) as usize;
        unsafe {
            std::arch::asm!(
                "mov qword ptr fs:[__sancov_lowest_stack@tpoff], {}",
                in(reg) sp,
                options(nostack, preserves_flags)
            )
        };
        sp
    }

    pub fn max_offset(initial: usize) -> usize {
        let lowest: usize;
        unsafe {
            std::arch::asm!(
                "mov {}, qword ptr fs:[__sancov_lowest_stack@tpoff]",
                out(reg) lowest,
                options(nostack, preserves_flags, readonly)
            )
        };
        initial.saturating_sub(lowest)
    }
}

/// Elsewhere: no stack depth measured.
#[cfg(not(any(
    rc_any_sanitizer,
    all(rc_no_sanitizer, target_os = "linux", target_arch = "x86_64")
)))]
pub mod stack_depth {
    pub fn record_initial() -> usize {
        0
    }

    pub fn max_offset(_initial: usize) -> usize {
        0
    }
}

/// libFuzzer's stack-depth feature for an input that went `offset` bytes
/// deep, numbered after the counters' features (`base`): its step function
/// of the depth in words, which grows like 8·log2 (`TracePC::CollectFeatures`).
pub fn stack_depth_feature(base: u32, offset: usize) -> Option<u32> {
    let words = offset / std::mem::size_of::<usize>();
    if words == 0 {
        return None;
    }
    let log2 = usize::BITS - 1 - words.leading_zeros();
    let step = if log2 < 3 {
        words
    } else {
        let shift = log2 - 3;
        (shift as usize + 1) * 8 + ((words >> shift) & 7)
    };
    Some(base + step as u32)
}

/// The registered counter arrays.
pub fn counters() -> Vec<(usize, usize)> {
    COUNTERS.lock().map(|c| c.clone()).unwrap_or_default()
}

/// Zeroes every counter before an input runs.
pub fn reset(arrays: &[(usize, usize)]) {
    for &(start, end) in arrays {
        unsafe { std::ptr::write_bytes(start as *mut u8, 0, end - start) };
    }
}

/// Copies every counter into `snapshot` (sized beforehand) with `memcpy`,
/// which is not instrumented: the driver's own code that runs afterwards
/// (building the answer) cannot change what the input covered.
pub fn snapshot(arrays: &[(usize, usize)], snapshot: &mut [u8]) {
    let mut at = 0;
    for &(start, end) in arrays {
        let len = end - start;
        unsafe {
            std::ptr::copy_nonoverlapping(start as *const u8, snapshot.as_mut_ptr().add(at), len)
        };
        at += len;
    }
}

/// libFuzzer's features from 8-bit counters: counter index × 8 + the
/// bucket of its hit count (1, 2, 3, 4–7, 8–15, 16–31, 32–127, 128+), then
/// the stack-depth feature, if any.
pub fn append_features(snapshot: &[u8], stack: Option<u32>, out: &mut Vec<u8>) {
    let count_at = out.len();
    out.extend_from_slice(&0u32.to_le_bytes());
    let mut count = 0u32;
    for (i, &c) in snapshot.iter().enumerate() {
        if c != 0 {
            let bucket = match c {
                1 => 0,
                2 => 1,
                3 => 2,
                4..=7 => 3,
                8..=15 => 4,
                16..=31 => 5,
                32..=127 => 6,
                _ => 7,
            };
            out.extend_from_slice(&(i as u32 * 8 + bucket).to_le_bytes());
            count += 1;
        }
    }
    if let Some(f) = stack {
        out.extend_from_slice(&f.to_le_bytes());
        count += 1;
    }
    out[count_at..count_at + 4].copy_from_slice(&count.to_le_bytes());
}

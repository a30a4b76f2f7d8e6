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
/// libFuzzer's mutation dictionaries only: no-ops here. With a sanitizer its
/// runtime defines them.
#[cfg(rc_no_sanitizer)]
mod trace {
    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_cmp1(_a: u8, _b: u8) {}
    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_cmp2(_a: u16, _b: u16) {}
    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_cmp4(_a: u32, _b: u32) {}
    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_cmp8(_a: u64, _b: u64) {}
    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_const_cmp1(_a: u8, _b: u8) {}
    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_const_cmp2(_a: u16, _b: u16) {}
    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_const_cmp4(_a: u32, _b: u32) {}
    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_const_cmp8(_a: u64, _b: u64) {}
    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_switch(_val: u64, _cases: *const u64) {}
    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_div4(_val: u32) {}
    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_div8(_val: u64) {}
    #[unsafe(no_mangle)]
    pub extern "C" fn __sanitizer_cov_trace_gep(_idx: usize) {}
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

//! Keeping a long-lived process's heap small (the server's above all): few allocator arenas, and
//! freed heap given back to the operating system after one-off big jobs and after each
//! generation of the embedded model.
//!
//! glibc gives threads their own arenas (up to eight per core), and each keeps what its threads
//! freed. The server's blocking threads come and go (index commits, each completion of the
//! embedded model, which allocates a context and frees it), so memory grew with each new
//! thread: with the default model on 2 cores, 254.8 MB after 21 completions; 235.8 MB with four
//! arenas and 236.3 MB with two (`MALLOC_ARENA_MAX`, measured with `crossfile bench lsp
//! --embedded --requests 20`). Fewer arenas cost parallel work lock waits: cold indexing of
//! django took 2.7–3.2 s with the default, 3.1–3.15 s with four, 3.6–4.2 s with two
//! (interleaved runs). [`tune_allocator`] sets two arenas per core before the runtime starts its
//! threads.
//!
//! glibc also serves a large block (128 KiB and up) by `mmap`, returned to the system when freed,
//! but after freeing one it raises that threshold to the block's size (up to 32 MiB), so later
//! blocks of that size come from the arenas and stay resident when freed. The server allocates
//! and frees blocks of megabytes again and again (an index writer's document channel and term
//! table at each commit, a decode's buffers), so its memory rose in steps: with two kept model
//! contexts, `bench typing --sessions 4 --embedded` on click peaked at 304.0 MB and ended at
//! 271.8 MB with the moving threshold, and at 268.2 and 258.5 MB with it fixed at 128 KiB (the
//! same run, `GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072`); cold indexing of django took
//! 3.60 s (the first run, files not yet in the page cache) and 2.33 s with the moving threshold,
//! 2.37 and 2.35 s with it fixed. [`tune_allocator`] fixes it there too.
//!
//! Building or opening an index and loading a model allocate and free far more than the server
//! keeps, and glibc's allocator holds freed memory for later instead of returning it: a server
//! that had indexed django and loaded the default model (n_ctx 2048) was 259.7 MB resident, and
//! 233.2 MB once glibc was asked to return what was free (`malloc_trim(0)`, measured by calling
//! it from a debugger). [`release_free_heap`] asks that once after each such job (the server
//! calls it), and the embedded backend after each of its generations (whose context, some megabytes, is made and freed each
//! time: 268.0 MB after 21 completions without it, 254.8 MB with it); on other platforms it does
//! nothing.

/// Limits the allocator to two arenas per core and fixes the size from which it maps blocks of
/// their own at 128 KiB (glibc; elsewhere nothing). Call before threads start.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            /// glibc: sets an allocator parameter; 1 on success.
            fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
        }
        /// glibc's `M_ARENA_MAX` (malloc.h).
        const M_ARENA_MAX: std::ffi::c_int = -8;
        /// glibc's `M_MMAP_THRESHOLD` (malloc.h): setting it also stops it from moving.
        const M_MMAP_THRESHOLD: std::ffi::c_int = -3;
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let arenas = std::ffi::c_int::try_from(2 * cores).unwrap_or(std::ffi::c_int::MAX);
        // SAFETY: `mallopt` takes two integers and changes only the allocator's own settings,
        // under its lock; `M_ARENA_MAX` bounds how many arenas it creates from now on and
        // `M_MMAP_THRESHOLD` which requests it maps on their own.
        let set = unsafe { mallopt(M_ARENA_MAX, arenas) };
        let mapped = unsafe { mallopt(M_MMAP_THRESHOLD, 128 << 10) };
        tracing::debug!(
            arenas,
            set = set == 1,
            mmap_threshold_set = mapped == 1,
            "allocator arenas limited"
        );
    }
}

/// Returns the allocator's free memory to the operating system, where the platform allows it.
pub fn release_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            /// glibc: gives free memory of every arena back to the system; nonzero if any was.
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: `malloc_trim` takes a byte count and touches only the allocator's own state,
        // under the allocator's locks; any thread may call it at any time.
        let released = unsafe { malloc_trim(0) };
        tracing::debug!(released = released != 0, "free heap returned to the system");
    }
}

/// A process's memory as Linux reports it in `/proc/<pid>/status`, in KiB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcessMemory {
    /// Resident now (`VmRSS`).
    pub rss_kb: u64,
    /// The resident peak so far (`VmHWM`).
    pub hwm_kb: u64,
}

impl ProcessMemory {
    /// This process's memory.
    pub fn own() -> std::io::Result<ProcessMemory> {
        ProcessMemory::read("/proc/self/status")
    }

    /// Process `pid`'s memory.
    pub fn of(pid: u32) -> std::io::Result<ProcessMemory> {
        ProcessMemory::read(&format!("/proc/{pid}/status"))
    }

    fn read(path: &str) -> std::io::Result<ProcessMemory> {
        let status = std::fs::read_to_string(path)?;
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|kb| kb.parse::<u64>().ok())
                .ok_or_else(|| {
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("no {name} in {path}"),
                    )
                })
        };
        Ok(ProcessMemory {
            rss_kb: field("VmRSS:")?,
            hwm_kb: field("VmHWM:")?,
        })
    }

    /// Resident memory in decimal megabytes.
    pub fn rss_mb(&self) -> f64 {
        kib_to_mb(self.rss_kb)
    }

    /// The resident peak in decimal megabytes.
    pub fn hwm_mb(&self) -> f64 {
        kib_to_mb(self.hwm_kb)
    }
}

/// KiB (as `/proc` counts) in decimal megabytes.
fn kib_to_mb(kb: u64) -> f64 {
    kb as f64 * 1024.0 / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_memory_is_read_and_the_peak_is_not_below_the_present() {
        let own = ProcessMemory::own().expect("/proc/self/status");
        assert!(own.rss_kb > 0);
        assert!(own.hwm_kb >= own.rss_kb, "{own:?}");
        assert!(ProcessMemory::of(u32::MAX).is_err());
    }
}

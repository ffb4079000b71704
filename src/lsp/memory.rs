//! Giving freed heap back to the operating system after the server's one-off big jobs.
//!
//! Building or opening an index and loading a model allocate and free far more than the server
//! keeps, and glibc's allocator holds freed memory for later instead of returning it: a server
//! that had indexed django and loaded the default model (n_ctx 2048) was 259.7 MB resident, and
//! 233.2 MB once glibc was asked to return what was free (`malloc_trim(0)`, measured by calling
//! it from a debugger). [`release_free_heap`] asks that once after each such job; on other
//! platforms it does nothing.

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

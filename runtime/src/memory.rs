//! Giving freed heap memory back to the system. glibc keeps what a program frees in its arenas
//! for reuse, so after a burst (a long session's learning steps, a flood of frames, many
//! sessions closed) a long-lived process would go on holding its peak.

/// Returns the free memory of the allocator's arenas to the system (glibc; elsewhere the
/// allocator does it itself).
pub fn return_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only releases free memory of the allocator's own arenas.
    unsafe {
        libc::malloc_trim(0);
    }
}

//! What a component written without the standard library needs to run, for `wasm32-wasip2`: a
//! global allocator, the canonical ABI's allocator (`cabi_realloc`), the C library that supplies
//! `memcmp` and its kin (importing nothing), and a panic handler that traps. A component invokes
//! [`runtime!`] once at its crate root; elsewhere the macro expands to nothing.

#![no_std]

#[cfg(target_arch = "wasm32")]
pub use dlmalloc;

/// The runtime items, expanded in the component's own crate so that its exports are the
/// component's.
#[macro_export]
macro_rules! runtime {
    () => {
        #[cfg(target_arch = "wasm32")]
        #[global_allocator]
        static ALLOCATOR: $crate::dlmalloc::GlobalDlmalloc = $crate::dlmalloc::GlobalDlmalloc;

        // Without the standard library nothing supplies `memcmp` and its kin; the target's own C
        // library does, and they import nothing.
        #[cfg(target_arch = "wasm32")]
        #[link(name = "c")]
        #[allow(unsafe_code)]
        unsafe extern "C" {}

        /// The canonical ABI's allocator, through which the host places arguments in the
        /// component's memory; the standard library would supply it.
        #[cfg(target_arch = "wasm32")]
        #[allow(unsafe_code)]
        #[unsafe(no_mangle)]
        unsafe extern "C" fn cabi_realloc(old: *mut u8, old_len: usize, align: usize, new_len: usize) -> *mut u8 {
            use alloc::alloc::{Layout, alloc, realloc};
            if new_len == 0 {
                return align as *mut u8;
            }
            let Ok(layout) = Layout::from_size_align(new_len, align) else { core::arch::wasm32::unreachable() };
            // SAFETY: the canonical ABI passes back a pointer this function returned, with the
            // length and alignment it was allocated with, or a zero length for a fresh allocation.
            let pointer = unsafe {
                if old_len == 0 {
                    alloc(layout)
                } else {
                    realloc(old, Layout::from_size_align_unchecked(old_len, align), new_len)
                }
            };
            if pointer.is_null() {
                core::arch::wasm32::unreachable()
            }
            pointer
        }

        #[cfg(target_arch = "wasm32")]
        #[panic_handler]
        fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
            core::arch::wasm32::unreachable()
        }
    };
}

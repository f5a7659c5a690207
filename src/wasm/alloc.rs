//! The global allocator of the wasm build: the standard one (dlmalloc), with the heap grown
//! geometrically once it is large.
//!
//! dlmalloc grows the wasm memory by what each allocation needs, rounded to 64 KB. A large input
//! (10^5 sessions and more) then grows the memory thousands of times in one call, and a JS engine
//! may collect garbage on each growth: measured in Node 20, a first `applySessionList` of 3·10^5
//! sessions took 26 s instead of 1 s, nearly all of it in V8's mark-compact. So once the memory
//! holds [`SMALL_PAGES`], every growth is followed by room for half as much again, at once
//! (allocated and freed: dlmalloc keeps it as its top chunk), and the number of growths is
//! logarithmic. Small heaps grow as before (the memory benchmark's bounds stay as they were).

use std::alloc::{GlobalAlloc, Layout, System};

use core::arch::wasm32::memory_size;

/// 64 KB pages below which the memory grows as dlmalloc grows it (32 MB).
const SMALL_PAGES: usize = 512;
const PAGE: usize = 64 * 1024;

pub struct Geometric;

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; `grew` only
// allocates and frees a block of its own through `System`.
unsafe impl GlobalAlloc for Geometric {
    #[inline(never)]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let before = memory_size(0);
        // SAFETY: the caller's contract, forwarded.
        let p = unsafe { System.alloc(layout) };
        grew(before);
        p
    }

    #[inline(never)]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract, forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }

    #[inline(never)]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let before = memory_size(0);
        // SAFETY: the caller's contract, forwarded.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        grew(before);
        p
    }
}

/// After an allocation: when it grew a large memory, room for half as much again.
#[inline(never)]
fn grew(before: usize) {
    let now = memory_size(0);
    if now == before || now < SMALL_PAGES {
        return;
    }
    let Ok(room) = Layout::from_size_align((now / 2).saturating_mul(PAGE), 16) else {
        return;
    };
    // SAFETY: `room` has a non-zero size; the block is freed with the layout it was allocated
    // with, and never read or written.
    unsafe {
        let block = System.alloc(room);
        if !block.is_null() {
            System.dealloc(block, room);
        }
    }
}

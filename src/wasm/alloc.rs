//! The global allocator of the wasm builds: talc, over the wasm memory, which it grows itself
//! (geometrically once the memory is large).
//!
//! talc instead of std's dlmalloc: 1.9 KB raw of code instead of 6.2 KB (-1.2 KB gzip of the store
//! module, scripts/build/budgets.mjs), best fit over free lists by size, O(1) frees.
//!
//! Growing by what each allocation needs, rounded to 64 KB pages, would grow a memory thousands of
//! times for one large input (10^5 sessions and more), and a JS engine may collect garbage on each
//! growth: measured in Node 20, a first `applySessionList` of 3·10^5 sessions took 26 s instead of
//! 1 s, nearly all of it in V8's mark-compact. So once the memory holds [`SMALL_PAGES`], a growth
//! adds at least half as much again, and the number of growths is logarithmic. Small heaps grow by
//! what they need (the memory benchmark's bounds stay as they were).

use core::alloc::Layout;
use core::arch::wasm32::{memory_grow, memory_size};

use talc::{locking::AssumeUnlockable, OomHandler, Span, Talc, Talck};

/// 64 KB pages below which the memory grows by what an allocation needs (32 MB).
const SMALL_PAGES: usize = 512;
const PAGE: usize = 64 * 1024;

/// The allocator: wasm32 is single-threaded, so talc's lock is none.
pub type Allocator = Talck<AssumeUnlockable, Grow>;

/// The allocator over a memory it has not claimed yet (it claims pages as it grows the memory).
pub const fn allocator() -> Allocator {
    Talc::new(Grow {
        heap: Span::empty(),
    })
    .lock()
}

/// talc's out-of-memory handler: grows the wasm memory and hands talc the new pages.
pub struct Grow {
    /// The pages claimed so far: one span, since only this handler grows the memory.
    heap: Span,
}

impl OomHandler for Grow {
    fn handle_oom(talc: &mut Talc<Self>, layout: Layout) -> Result<(), ()> {
        // Room for the allocation and talc's own bookkeeping (a tag and an alignment gap; the
        // first claim also holds talc's free-list heads, under one page).
        let needed = layout
            .size()
            .saturating_add(layout.align())
            .saturating_add(PAGE)
            .div_ceil(PAGE);
        let held = memory_size(0);
        let mut pages = if held >= SMALL_PAGES {
            needed.max(held / 2)
        } else {
            needed
        };
        // When the memory cannot grow that far, half of it, down to what is needed.
        let first = loop {
            let grown = memory_grow(0, pages);
            if grown != usize::MAX {
                break grown;
            }
            if pages == needed {
                return Err(());
            }
            pages = needed.max(pages / 2);
        };
        let base = first.saturating_mul(PAGE) as *mut u8;
        let acme = base.wrapping_add(pages.saturating_mul(PAGE));
        let heap = talc.oom_handler.heap;
        talc.oom_handler.heap = match heap.get_base_acme() {
            // SAFETY: the new pages follow the held span directly (nothing else grows this
            // memory), so the extended span is memory talc may own, and it only grows.
            Some((held_base, held_acme)) if held_acme == base => unsafe {
                talc.extend(heap, Span::new(held_base, acme))
            },
            // SAFETY: the pages were just added by `memory.grow`: valid, unused by anything else.
            _ => unsafe { talc.claim(Span::new(base, acme)) }?,
        };
        Ok(())
    }
}

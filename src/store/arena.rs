//! Chunked storage for the message index: rows and id text grow chunk by chunk instead of by
//! reallocating one ever larger block. A doubling `Vec` of a long transcript keeps up to half of
//! its capacity unused, and each doubling briefly holds the old and the new block at once,
//! which grows the wasm memory for good (it never shrinks). Here the first chunk grows by
//! doubling up to the chunk size (small sessions stay small); later chunks are allocated at
//! their final size and never move. The creation order of the rows is a [`BlockList`]: a list
//! in blocks, so inserting or removing anywhere moves at most one block's elements.

/// Rows per chunk.
const ROWS: usize = 256;
/// Bytes of id text per chunk (an id longer than that gets a chunk of its own size).
const ID_BYTES: usize = 16 * 1024;

/// A vector in chunks of [`ROWS`] elements.
#[derive(Clone, Debug)]
pub(crate) struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Chunked<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn get(&self, index: usize) -> Option<&T> {
        self.chunks.get(index / ROWS)?.get(index % ROWS)
    }

    pub fn get_mut(&mut self, index: usize) -> Option<&mut T> {
        self.chunks.get_mut(index / ROWS)?.get_mut(index % ROWS)
    }

    pub fn push(&mut self, value: T) {
        let chunk = match self.chunks.last_mut() {
            Some(last) if last.len() < ROWS => last,
            _ => {
                let capacity = if self.chunks.is_empty() { 8 } else { ROWS };
                self.chunks.push(Vec::with_capacity(capacity));
                let Some(last) = self.chunks.last_mut() else {
                    return;
                };
                last
            }
        };
        if chunk.len() == chunk.capacity() {
            // Only the first chunk can be short of room: double it, up to the chunk size.
            let more = chunk.len().clamp(1, ROWS.saturating_sub(chunk.len()));
            chunk.reserve_exact(more);
        }
        chunk.push(value);
        self.len = self.len.saturating_add(1);
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.chunks.iter_mut().flat_map(|c| c.iter_mut())
    }

    /// Heap bytes held (capacities).
    pub fn heap_bytes(&self) -> usize {
        let element = std::mem::size_of::<T>();
        self.chunks
            .iter()
            .map(|c| c.capacity().saturating_mul(element))
            .fold(
                self.chunks
                    .capacity()
                    .saturating_mul(std::mem::size_of::<Vec<T>>()),
                usize::saturating_add,
            )
    }
}

/// Elements per block of a [`BlockList`] (4 KB of `u32`).
const BLOCK: usize = 1024;

/// A list in blocks of at most [`BLOCK`] elements, in an order its owner keeps (the message
/// index: slots by creation order). An insertion or a removal anywhere moves at most one block's
/// elements (a plain vector moves up to all of them: a page of rows out of order, or updates of
/// rows throughout a long transcript, would cost O(n²)), and finding a place is two binary
/// searches. Blocks are never empty; a full block splits in halves, except that a value going
/// after its last element starts the next block (so appending in order fills every block); a
/// block that falls under a quarter merges with a neighbour when they fit in one.
#[derive(Clone, Debug)]
pub(crate) struct BlockList<T> {
    blocks: Vec<Vec<T>>,
    len: usize,
}

/// A place in a [`BlockList`]: a block and an offset in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Place {
    block: usize,
    at: usize,
}

impl<T> Default for BlockList<T> {
    fn default() -> Self {
        BlockList {
            blocks: Vec::new(),
            len: 0,
        }
    }
}

impl<T: Copy + PartialEq> BlockList<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn last(&self) -> Option<T> {
        self.blocks.last().and_then(|b| b.last()).copied()
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = T> + '_ {
        self.blocks.iter().flat_map(|b| b.iter().copied())
    }

    /// The first place whose element is not `before`; the elements `before` holds for must come
    /// first (as for `slice::partition_point`).
    pub fn partition_point(&self, mut before: impl FnMut(T) -> bool) -> Place {
        let block = self
            .blocks
            .partition_point(|b| b.last().is_some_and(|&v| before(v)));
        match self.blocks.get(block) {
            Some(b) => Place {
                block,
                at: b.partition_point(|&v| before(v)),
            },
            None => self.end(),
        }
    }

    /// The place after the last element.
    pub fn end(&self) -> Place {
        let block = self.blocks.len().saturating_sub(1);
        Place {
            block,
            at: self.blocks.get(block).map_or(0, Vec::len),
        }
    }

    pub fn get(&self, place: Place) -> Option<T> {
        self.blocks.get(place.block)?.get(place.at).copied()
    }

    /// The place of `value`, searched from the end (a fallback for an owner's inconsistent
    /// order).
    pub fn rposition(&self, value: T) -> Option<Place> {
        self.blocks.iter().enumerate().rev().find_map(|(block, b)| {
            b.iter()
                .rposition(|&v| v == value)
                .map(|at| Place { block, at })
        })
    }

    /// Inserts `value` at `place` (a place past a block's end appends to it).
    pub fn insert(&mut self, place: Place, value: T) {
        let count = self.blocks.len();
        let index = place.block.min(count.saturating_sub(1));
        let Some(block) = self.blocks.get_mut(index) else {
            // The first block grows by doubling up to the block size (short lists stay small).
            let mut first = Vec::with_capacity(4);
            first.push(value);
            self.blocks.push(first);
            self.len = 1;
            return;
        };
        let at = place.at.min(block.len());
        if block.len() < BLOCK {
            if block.len() == block.capacity() {
                let more = block.len().clamp(1, BLOCK.saturating_sub(block.len()));
                block.reserve_exact(more);
            }
            block.insert(at, value);
        } else {
            // Full: the value at the block's end starts the next block (appending in order fills
            // every block); anywhere else the upper half moves to a new block.
            let mut next = Vec::with_capacity(BLOCK);
            if at < BLOCK {
                next.extend_from_slice(block.get(BLOCK / 2..).unwrap_or_default());
                block.truncate(BLOCK / 2);
                if at <= BLOCK / 2 {
                    block.insert(at, value);
                } else {
                    next.insert(at.saturating_sub(BLOCK / 2).min(next.len()), value);
                }
            } else {
                next.push(value);
            }
            self.blocks.insert(index.saturating_add(1).min(count), next);
        }
        self.len = self.len.saturating_add(1);
    }

    /// Removes the element at `place`.
    pub fn remove(&mut self, place: Place) -> Option<T> {
        let block = self.blocks.get_mut(place.block)?;
        if place.at >= block.len() {
            return None;
        }
        let value = block.remove(place.at);
        self.len = self.len.saturating_sub(1);
        let left = block.len();
        if left == 0 {
            self.blocks.remove(place.block);
        } else if left < BLOCK / 4 {
            self.merge_around(place.block);
        }
        Some(value)
    }

    /// Merges the short block `index` into a neighbour when the two fit in one block.
    fn merge_around(&mut self, index: usize) {
        let len_of = |blocks: &[Vec<T>], i: usize| blocks.get(i).map(Vec::len);
        let this = len_of(&self.blocks, index).unwrap_or(0);
        let (into, from) = match (
            index.checked_sub(1).and_then(|i| len_of(&self.blocks, i)),
            len_of(&self.blocks, index.saturating_add(1)),
        ) {
            (_, Some(next)) if next.saturating_add(this) <= BLOCK => {
                (index, index.saturating_add(1))
            }
            (Some(prev), _) if prev.saturating_add(this) <= BLOCK => {
                (index.saturating_sub(1), index)
            }
            _ => return,
        };
        if from >= self.blocks.len() {
            return;
        }
        let moved = self.blocks.remove(from);
        if let Some(block) = self.blocks.get_mut(into) {
            block.extend(moved);
        }
    }

    /// Heap bytes held (capacities).
    pub fn heap_bytes(&self) -> usize {
        let element = std::mem::size_of::<T>();
        self.blocks
            .iter()
            .map(|b| b.capacity().saturating_mul(element))
            .fold(
                self.blocks
                    .capacity()
                    .saturating_mul(std::mem::size_of::<Vec<T>>()),
                usize::saturating_add,
            )
    }
}

/// Where an id's text is: chunk, byte offset and length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IdPlace {
    pub chunk: u16,
    pub at: u32,
    pub len: u32,
}

/// Id text, end to end in chunks of [`ID_BYTES`]; removed ids leave holes until the owner
/// rebuilds the arena (see [`Ids::should_compact`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct Ids {
    chunks: Vec<String>,
    bytes: usize,
    holes: usize,
}

impl Ids {
    pub fn get(&self, place: IdPlace) -> &str {
        let at = place.at as usize;
        self.chunks
            .get(usize::from(place.chunk))
            .and_then(|c| c.get(at..at.saturating_add(place.len as usize)))
            .unwrap_or("")
    }

    /// Appends an id; `None` when the arena is full (65,536 chunks: a gigabyte of ids).
    pub fn push(&mut self, id: &str) -> Option<IdPlace> {
        let room = |c: &String| c.capacity().saturating_sub(c.len());
        let fits = self.chunks.last().is_some_and(|c| room(c) >= id.len());
        if !fits {
            let only_one = self.chunks.len() == 1;
            let grown = match self.chunks.last_mut() {
                // The first chunk doubles up to the chunk size while the id fits in it.
                Some(last) if only_one && last.len().saturating_add(id.len()) <= ID_BYTES => {
                    let target = last
                        .capacity()
                        .saturating_mul(2)
                        .max(last.len().saturating_add(id.len()))
                        .min(ID_BYTES);
                    last.reserve_exact(target.saturating_sub(last.len()));
                    true
                }
                _ => false,
            };
            if !grown {
                let capacity = if self.chunks.is_empty() {
                    id.len().max(64)
                } else {
                    id.len().max(ID_BYTES)
                };
                if self.chunks.len() > usize::from(u16::MAX) {
                    return None;
                }
                self.chunks.push(String::with_capacity(capacity));
            }
        }
        let chunk_index = self.chunks.len().checked_sub(1)?;
        let chunk = self.chunks.get_mut(chunk_index)?;
        let place = IdPlace {
            chunk: u16::try_from(chunk_index).ok()?,
            at: u32::try_from(chunk.len()).ok()?,
            len: u32::try_from(id.len()).ok()?,
        };
        chunk.push_str(id);
        self.bytes = self.bytes.saturating_add(id.len());
        Some(place)
    }

    /// Records that an id's text is no longer referenced.
    pub fn release(&mut self, place: IdPlace) {
        self.holes = self.holes.saturating_add(place.len as usize);
    }

    /// Whether most of the text is holes (rebuild with the live ids then).
    pub fn should_compact(&self) -> bool {
        self.holes > ID_BYTES && self.holes > self.bytes / 2
    }

    /// Heap bytes held (capacities).
    pub fn heap_bytes(&self) -> usize {
        self.chunks.iter().map(String::capacity).fold(
            self.chunks
                .capacity()
                .saturating_mul(std::mem::size_of::<String>()),
            usize::saturating_add,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunked_rows_index_across_chunks_and_never_move_a_full_chunk() {
        let mut rows: Chunked<u32> = Chunked::default();
        for i in 0..1000 {
            rows.push(i);
        }
        assert_eq!(rows.len(), 1000);
        assert_eq!(rows.get(0), Some(&0));
        assert_eq!(rows.get(255), Some(&255));
        assert_eq!(rows.get(256), Some(&256));
        assert_eq!(rows.get(999), Some(&999));
        assert_eq!(rows.get(1000), None);
        let first = rows.get(0).map(std::ptr::from_ref);
        for i in 1000..5000 {
            rows.push(i);
        }
        assert_eq!(
            rows.get(0).map(std::ptr::from_ref),
            first,
            "a full chunk stays put"
        );
        if let Some(v) = rows.get_mut(4321) {
            *v = 7;
        }
        assert_eq!(rows.get(4321), Some(&7));
        assert_eq!(rows.iter_mut().count(), 5000);
        // At most one partly used chunk: little unused room.
        assert!(
            rows.heap_bytes() < 5000 * 4 + 256 * 4 + 64 * 24,
            "{}",
            rows.heap_bytes()
        );
    }

    /// Random inserts (in order, reversed, anywhere) and removals against a plain vector.
    #[test]
    fn block_list_equals_a_vector_under_random_edits() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n.max(1) as u64) as usize
        };
        for round in 0..12 {
            let mut list: BlockList<u32> = BlockList::default();
            let mut plain: Vec<u32> = Vec::new();
            let steps = if round < 6 { 6000 } else { 300 };
            for step in 0..steps {
                let value = u32::try_from(step).unwrap_or(0);
                let remove = !plain.is_empty() && next(10) < [1, 3, 5, 9, 0, 2][round % 6];
                // Elements are kept sorted by value through the list's partition point.
                let key = match round % 4 {
                    0 => value,
                    1 => u32::MAX - value,
                    _ => u32::try_from(next(1 << 30)).unwrap_or(0),
                };
                if remove {
                    let at = next(plain.len());
                    let victim = plain[at];
                    let place = list.partition_point(|v| v < victim);
                    assert_eq!(list.get(place), Some(victim));
                    assert_eq!(list.remove(place), Some(victim));
                    plain.remove(at);
                } else {
                    let place = list.partition_point(|v| v < key);
                    list.insert(place, key);
                    let at = plain.partition_point(|&v| v < key);
                    plain.insert(at, key);
                }
                assert_eq!(list.len(), plain.len());
                assert_eq!(list.last(), plain.last().copied());
            }
            assert_eq!(list.iter().collect::<Vec<_>>(), plain, "round {round}");
            assert_eq!(
                list.iter().rev().collect::<Vec<_>>(),
                plain.iter().rev().copied().collect::<Vec<_>>()
            );
            if let Some(&some) = plain.get(plain.len() / 2) {
                let place = list.rposition(some).expect("present");
                assert_eq!(list.get(place), Some(some));
            }
            assert!(list
                .blocks
                .iter()
                .all(|b| !b.is_empty() && b.len() <= BLOCK));
        }
    }

    #[test]
    fn block_list_filled_in_order_keeps_its_blocks_full() {
        for reversed in [false] {
            let mut list: BlockList<u32> = BlockList::default();
            for i in 0..100_000u32 {
                let key = if reversed { u32::MAX - i } else { i };
                let place = list.partition_point(|v| v < key);
                list.insert(place, key);
            }
            assert_eq!(list.len(), 100_000);
            // Every block but one full: about 4 bytes per element.
            assert!(
                list.heap_bytes() < 100_000 * 4 + 2 * BLOCK * 4 + 4096,
                "{}",
                list.heap_bytes()
            );
        }
    }

    #[test]
    fn ids_of_any_length_come_back() {
        let mut ids = Ids::default();
        let long = "x".repeat(ID_BYTES + 5);
        let texts: Vec<String> = (0..3000)
            .map(|i| {
                if i == 1500 {
                    long.clone()
                } else {
                    format!("message-{i:05}-é")
                }
            })
            .collect();
        let places: Vec<IdPlace> = texts.iter().map(|t| ids.push(t).expect("room")).collect();
        for (t, p) in texts.iter().zip(&places) {
            assert_eq!(ids.get(*p), t);
        }
        assert!(!ids.should_compact());
        for p in &places {
            ids.release(*p);
        }
        assert!(ids.should_compact());
    }
}

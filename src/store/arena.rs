//! Chunked storage for the message index: rows and id text grow chunk by chunk instead of by
//! reallocating one ever larger block. A doubling `Vec` of a long transcript keeps up to half of
//! its capacity unused, and each doubling briefly holds the old and the new block at once,
//! which grows the wasm memory for good (it never shrinks). Here the first chunk grows by
//! doubling up to the chunk size (small sessions stay small); later chunks are allocated at
//! their final size and never move.

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

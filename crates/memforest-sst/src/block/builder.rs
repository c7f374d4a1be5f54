//! Builds one block payload (see the [module docs](super) for the layout).

use memforest_codec::varint;

/// Accumulates sorted entries into a block payload.
///
/// Shapes: keys and values are byte strings; the caller adds keys in its own strictly
/// increasing order (the builder does not compare them). Offsets are `u32`, so a payload is
/// limited to 4 GiB; [`BlockBuilder::add`] refuses to grow past that.
#[derive(Debug)]
pub struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    restart_interval: usize,
    since_restart: usize,
    last_key: Vec<u8>,
}

impl BlockBuilder {
    /// An empty builder placing a restart point every `restart_interval` keys (RocksDB
    /// `block_restart_interval`, default 16; 0 is taken as 1).
    #[must_use]
    pub fn new(restart_interval: usize) -> Self {
        Self {
            buf: Vec::new(),
            restarts: vec![0],
            restart_interval: restart_interval.max(1),
            since_restart: 0,
            last_key: Vec::new(),
        }
    }

    /// Appends one entry.
    ///
    /// # Errors
    /// When the payload would exceed 4 GiB (offsets are `u32`); the builder is unchanged.
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<(), &'static str> {
        let restart = self.since_restart >= self.restart_interval;
        let shared = if restart {
            0
        } else {
            key.iter()
                .zip(&self.last_key)
                .take_while(|(a, b)| a == b)
                .count()
        };
        let non_shared = key.get(shared..).unwrap_or_default();
        let too_big = "block payload over 4 GiB";
        let offset = u32::try_from(self.buf.len()).map_err(|_| too_big)?;
        let shared32 = u32::try_from(shared).map_err(|_| too_big)?;
        let non_shared32 = u32::try_from(non_shared.len()).map_err(|_| too_big)?;
        let value32 = u32::try_from(value.len()).map_err(|_| too_big)?;
        let grown = self.buf.len() + 15 + non_shared.len() + value.len() + self.restarts.len() * 4;
        u32::try_from(grown).map_err(|_| too_big)?;
        if restart {
            self.restarts.push(offset);
            self.since_restart = 0;
        }
        varint::put_u32(&mut self.buf, shared32);
        varint::put_u32(&mut self.buf, non_shared32);
        varint::put_u32(&mut self.buf, value32);
        self.buf.extend_from_slice(non_shared);
        self.buf.extend_from_slice(value);
        self.last_key.truncate(shared);
        self.last_key.extend_from_slice(non_shared);
        self.since_restart += 1;
        Ok(())
    }

    /// True when no entry has been added since creation or the last [`Self::finish`].
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// Size the payload would have if finished now, in bytes.
    #[must_use]
    pub fn estimated_len(&self) -> usize {
        self.buf.len() + (self.restarts.len() + 1) * 4
    }

    /// The last key added (empty if none).
    #[must_use]
    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }

    /// Appends the restart array, returns the payload, and resets the builder.
    pub fn finish(&mut self) -> Vec<u8> {
        let count = self.restarts.len();
        for restart in self.restarts.drain(..) {
            self.buf.extend_from_slice(&restart.to_le_bytes());
        }
        // `add` keeps the payload (restarts included) under 4 GiB, so the count fits.
        self.buf
            .extend_from_slice(&u32::try_from(count).unwrap_or(u32::MAX).to_le_bytes());
        // The next block starts with room for one like this one instead of growing by
        // doubling from empty.
        let room = self.buf.capacity();
        let out = std::mem::replace(&mut self.buf, Vec::with_capacity(room));
        self.restarts.push(0);
        self.since_restart = 0;
        self.last_key.clear();
        out
    }
}

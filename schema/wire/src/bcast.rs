//! `srun --compress`: the copies `srun --bcast` sends (the executable and its libraries) as
//! LZ4 blocks, Slurm 22.05's only compression, with their expanded sizes beside them; srun
//! compresses, the node daemon expands before writing.

/// [`BcastFile::compression`](crate::proto::BcastFile) of an LZ4-compressed copy.
pub const LZ4: &str = "lz4";

/// What LZ4 can expand a block to at most, per compressed byte (a run of one byte is the
/// best case: about 255 bytes per byte of its encoding), plus the smallest block.
const MAX_RATIO: usize = 256;
const SLACK: usize = 64;

/// `data` as one LZ4 block.
pub fn compress(data: &[u8]) -> Vec<u8> {
    lz4_flex::block::compress(data)
}

/// The `size` bytes of LZ4 block `data`. A `size` no block of that length can expand to, or
/// a block that does not decode to exactly `size` bytes, is an error (nothing is allocated
/// beyond what the block can hold).
pub fn expand(data: &[u8], size: u64) -> Result<Vec<u8>, String> {
    let size = usize::try_from(size).map_err(|_| format!("size {size} is too large"))?;
    if size > data.len().saturating_mul(MAX_RATIO).saturating_add(SLACK) {
        return Err(format!(
            "{} compressed bytes cannot expand to {size}",
            data.len()
        ));
    }
    let out = lz4_flex::block::decompress(data, size).map_err(|e| format!("bad LZ4 data: {e}"))?;
    if out.len() != size {
        return Err(format!(
            "LZ4 data expands to {} bytes, not {size}",
            out.len()
        ));
    }
    Ok(out)
}

/// The bytes of a copy sent with `compression` ("" = as they are, [`LZ4`]).
pub fn expand_as(compression: &str, data: &[u8], size: u64) -> Result<Vec<u8>, String> {
    match compression {
        "" => Ok(data.to_vec()),
        LZ4 => expand(data, size),
        other => Err(format!("unknown compression {other:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_round_trips_and_bad_blocks_are_refused_without_panics() {
        let data: Vec<u8> = b"#!/bin/sh\necho hi\n".repeat(500);
        let packed = compress(&data);
        assert!(packed.len() < data.len() / 10, "{}", packed.len());
        let size = data.len() as u64;
        assert_eq!(expand_as(LZ4, &packed, size).unwrap(), data);
        assert_eq!(expand_as("", b"plain", 0).unwrap(), b"plain");
        // A size the block cannot have, a size it does not decode to, garbage, a codec we
        // do not know: errors, not panics nor huge allocations.
        assert!(expand(&packed, u64::MAX).is_err());
        assert!(expand(&packed, 1 << 40).is_err());
        assert!(expand(&packed, size - 1).is_err());
        assert!(expand(&[0xff; 16], 100).is_err());
        assert!(expand_as("zlib", &packed, size).is_err());
    }
}

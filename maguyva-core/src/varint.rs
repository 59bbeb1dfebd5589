//! LEB128 variable-length integers for compact posting lists.

/// Appends `v` as LEB128.
pub fn push(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads one LEB128 value at `*pos`, advancing it; `None` if the bytes end
/// early or the value overflows.
pub fn read(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        if shift > 63 {
            return None;
        }
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Some(v);
        }
        shift += 7;
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trips(values in proptest::collection::vec(any::<u64>(), 0..50)) {
            let mut buf = Vec::new();
            for &v in &values { super::push(&mut buf, v); }
            let mut pos = 0;
            for &v in &values { prop_assert_eq!(super::read(&buf, &mut pos), Some(v)); }
            prop_assert_eq!(pos, buf.len());
            prop_assert_eq!(super::read(&buf, &mut pos), None);
        }
    }
}

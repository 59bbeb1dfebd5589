//! Trigram extraction. A trigram is three consecutive bytes of the text with
//! ASCII letters lowercased, packed into the low 24 bits of a `u32`. Folding
//! ASCII case lets one index serve case-sensitive and case-insensitive search
//! (the verification step restores exactness).

/// Packs three bytes, ASCII-lowercased.
pub fn pack(a: u8, b: u8, c: u8) -> u32 {
    (u32::from(a.to_ascii_lowercase()) << 16)
        | (u32::from(b.to_ascii_lowercase()) << 8)
        | u32::from(c.to_ascii_lowercase())
}

/// Texts at least this long are deduplicated with a bitmap of every
/// trigram instead of sorting all their windows.
const BITMAP_FROM: usize = 4096;

thread_local! {
    /// One bit per possible trigram (2 MiB), all clear between calls.
    static SEEN: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Every distinct trigram of `bytes`, sorted.
pub fn distinct(bytes: &[u8]) -> Vec<u32> {
    let windows = bytes.windows(3).map(|w| pack(w[0], w[1], w[2]));
    if bytes.len() < BITMAP_FROM {
        let mut out: Vec<u32> = windows.collect();
        out.sort_unstable();
        out.dedup();
        return out;
    }
    // A long text repeats most of its trigrams: marking them in a bitmap and
    // sorting only the distinct ones is several times faster than sorting
    // every window.
    SEEN.with(|seen| {
        let mut seen = seen.borrow_mut();
        seen.resize(1 << 18, 0);
        let mut out = Vec::new();
        for g in windows {
            let (word, bit) = ((g >> 6) as usize, 1u64 << (g & 63));
            if seen[word] & bit == 0 {
                seen[word] |= bit;
                out.push(g);
            }
        }
        for &g in &out {
            seen[(g >> 6) as usize] = 0;
        }
        out.sort_unstable();
        out
    })
}

/// The trigrams a case-sensitive match of `literal` must contain.
pub fn required_case_sensitive(literal: &[u8]) -> Vec<u32> {
    distinct(literal)
}

/// The trigrams a case-insensitive match of `literal` must contain. With
/// Unicode case folding, `k` also matches the Kelvin sign and `s` the long s,
/// and non-ASCII letters have variants of other byte lengths, so only
/// windows of ASCII bytes free of those letters are safe to require.
pub fn required_case_insensitive(literal: &[u8]) -> Vec<u32> {
    let safe = |b: u8| b.is_ascii() && !matches!(b.to_ascii_lowercase(), b'k' | b's');
    let mut out: Vec<u32> = literal
        .windows(3)
        .filter(|w| w.iter().all(|&b| safe(b)))
        .map(|w| pack(w[0], w[1], w[2]))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Both ways of deduplicating give every window once, sorted.
        #[test]
        fn distinct_trigrams_are_every_window_once(text in "[a-dA-D\n]{0,9000}") {
            let mut expect: Vec<u32> =
                text.as_bytes().windows(3).map(|w| pack(w[0], w[1], w[2])).collect();
            expect.sort_unstable();
            expect.dedup();
            proptest::prop_assert_eq!(distinct(text.as_bytes()), expect.clone());
            // The bitmap is left clear for the next text.
            proptest::prop_assert_eq!(distinct(text.as_bytes()), expect);
        }
    }

    #[test]
    fn packing_folds_ascii_case() {
        assert_eq!(pack(b'A', b'b', b'C'), pack(b'a', b'B', b'c'));
        assert_ne!(pack(b'a', b'b', b'c'), pack(b'a', b'b', b'd'));
        assert_eq!(distinct(b"abab").len(), 2);
        assert!(distinct(b"ab").is_empty());
    }

    #[test]
    fn case_insensitive_skips_unsafe_windows() {
        assert_eq!(required_case_insensitive(b"task").len(), 0);
        assert_eq!(required_case_insensitive(b"parse").len(), 1); // par; ars and rse hold an s
        assert_eq!(required_case_insensitive("héllo".as_bytes()).len(), 1); // llo
    }
}

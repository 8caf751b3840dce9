/// Byte-level ASCII comparisons for hot paths that should not go through Foundation's strings.
public enum ASCII {
    /// True when `byte` is `expected` or, for a lowercase letter `expected`, its uppercase
    /// letter: ASCII letters differ from their uppercase only in bit 0x20, and no other byte
    /// becomes a lowercase letter by setting it.
    @inlinable
    public static func matchesIgnoringCase(_ byte: UInt8, lowercase expected: UInt8) -> Bool {
        byte == expected || ((0x61...0x7A).contains(expected) && byte | 0x20 == expected)
    }
}

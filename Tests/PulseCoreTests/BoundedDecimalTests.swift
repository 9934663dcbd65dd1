import PulseCore
import Testing

/// The one parser of decimal numbers from outside: bounds before arithmetic, nil for anything else.
@Suite struct BoundedDecimalTests {
    @Test func integerEdgeCasesAreNilNeverATrap() {
        for text in [
            "", "-0", "+0", "-1", "+1", " 1", "1 ", "1.0", "1e3", "0x1f", "1_000", "١", "１",
            "9223372036854775807", "9223372036854775808", "18446744073709551616", "99999999999999999999",
            String(repeating: "9", count: 19), String(repeating: "0", count: 19), String(repeating: "9", count: 1000),
        ] {
            #expect(BoundedDecimal.parse(text) == nil, "\(text)")
        }
        #expect(BoundedDecimal.parse("0") == 0)
        #expect(BoundedDecimal.parse("007") == 7)
        #expect(BoundedDecimal.parse(String(repeating: "9", count: 18)) == 999_999_999_999_999_999)
        #expect(BoundedDecimal.parse("000000000000000042") == 42)
    }

    @Test func canonicalRefusesLeadingZerosButNotZero() {
        #expect(BoundedDecimal.parse("0", canonical: true) == 0)
        #expect(BoundedDecimal.parse("10", canonical: true) == 10)
        for text in ["00", "01", "007", "0000000000"] {
            #expect(BoundedDecimal.parse(text, canonical: true) == nil, "\(text)")
        }
    }

    @Test func digitsAndMaximumBound() {
        #expect(BoundedDecimal.parse("999999999999", maxDigits: 12) == 999_999_999_999)
        #expect(BoundedDecimal.parse("1000000000000", maxDigits: 12) == nil)
        // More than 18 digits is never allowed, whatever the caller asks.
        #expect(BoundedDecimal.parse(String(repeating: "1", count: 19), maxDigits: 40) == nil)
        #expect(BoundedDecimal.parse("255", maximum: 255) == 255)
        #expect(BoundedDecimal.parse("256", maximum: 255) == nil)
        #expect(BoundedDecimal.parse([UInt8]("12".utf8)[...]) == 12)
        #expect(BoundedDecimal.parse([0x31, 0x00, 0x32]) == nil)
    }

    /// Every byte string of up to three bytes from a small alphabet: the answer is the digits' value exactly
    /// when they are all digits.
    @Test func agreesWithAReferenceOnShortInputs() {
        let alphabet: [UInt8] = [0x30, 0x31, 0x39, 0x2d, 0x2b, 0x20, 0x2f, 0x3a, 0x00, 0xff]
        var inputs: [[UInt8]] = [[]]
        for _ in 0..<3 { inputs += inputs.flatMap { prefix in alphabet.map { prefix + [$0] } } }
        for input in Set(inputs) {
            let expected = !input.isEmpty && input.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } ? Int(String(decoding: input, as: UTF8.self)) : nil
            #expect(BoundedDecimal.parse(input) == expected, "\(input)")
        }
    }
}

import Foundation
import PulseTestSupport
import Testing

@testable import PulseCore

/// The strict parser against Python's `json` module (made as strict, Tests/Fixtures/json/strict_oracle.py)
/// on a hand-written corpus and on seeded random mutations of real input files: both must accept and
/// refuse the same documents, and agree on the values of those they accept. Mutants also prove the
/// parser never crashes or hangs on damaged input.
struct JSONConformanceTests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardizedFileURL

    /// JSONTestSuite-style cases: y_ must parse, n_ must not, i_ are the ones RFC 8259 leaves to the parser.
    static let corpus: [(String, [UInt8])] = {
        var cases: [(String, String)] = [
            ("y_empty_object", "{}"), ("y_empty_array", "[]"), ("y_scalar_string", "\"a\""), ("y_scalar_int", "-12"),
            ("y_scalar_null", " null "), ("y_exponents", "[1E2, 1e+2, 1e-2, -0.5e0, 0e0]"), ("y_int_max", "[9223372036854775807, -9223372036854775808]"),
            ("y_big_int", "[123456789012345678901234567890]"), ("y_escapes", #"["\"\\\/\b\f\n\r\t\u0041\u00e9\u20ac\ud83d\ude00"]"#),
            ("y_nul_escape", #"["a\u0000b"]"#), ("y_utf8", "[\"é€😀\u{7f}\"]"), ("y_nested", "{\"a\":{\"b\":[[],{}]}}"),
            ("y_whitespace", " \t\r\n[ 1 ,\t2 ]\r\n"), ("y_same_key_nested", #"{"a": {"a": 1}, "b": {"a": 2}}"#),
            ("y_deep_512", String(repeating: "[", count: 512) + String(repeating: "]", count: 512)),
            ("n_trailing_comma_object", #"{"a": 1,}"#), ("n_trailing_comma_array", "[1,]"), ("n_missing_comma", #"{"a": 1 "b": 2}"#),
            ("n_comment_line", "// x\n{}"), ("n_comment_block", "{} /* x */"), ("n_empty", ""), ("n_only_space", "   "),
            ("n_single_quote", "{'a': 1}"), ("n_unquoted_key", "{a: 1}"), ("n_leading_zero", "[012]"), ("n_plus", "[+1]"),
            ("n_dot_first", "[.1]"), ("n_dot_last", "[1.]"), ("n_exp_empty", "[1e]"), ("n_hex", "[0x10]"), ("n_nan", "[NaN]"),
            ("n_infinity", "[Infinity]"), ("n_minus_infinity", "[-Infinity]"), ("n_overflow", "[1e999]"), ("n_true_caps", "[True]"),
            ("n_raw_tab", "[\"a\tb\"]"), ("n_raw_newline", "[\"a\nb\"]"), ("n_raw_control", "[\"a\u{1f}b\"]"), ("n_bad_escape", #"["\q"]"#),
            ("n_short_unicode", #"["\u12"]"#), ("n_lone_high", #"["\ud800"]"#), ("n_lone_low", #"["\udc00"]"#),
            ("n_high_then_ascii", #"["\ud800\u0041"]"#), ("n_two_highs", #"["\ud800\ud800"]"#), ("n_duplicate_key", #"{"a": 1, "a": 1}"#),
            ("n_duplicate_nested", #"[{"x": {"k": 1, "k": 2}}]"#), ("n_two_values", "{} {}"), ("n_garbage", "[1] x"),
            ("n_unclosed_array", "[1"), ("n_unclosed_object", #"{"a": 1"#), ("n_unclosed_string", #"["a"#), ("n_colon_missing", #"{"a" 1}"#),
            ("n_comma_first", "[,1]"), ("n_double_comma", "[1,,2]"), ("n_minus_only", "[-]"), ("n_minus_space", "[- 1]"),
            ("n_deep_513", String(repeating: "[", count: 513) + String(repeating: "]", count: 513)),
        ]
        cases += [("y_escaped_slash", #""\/""#), ("n_exp_sign_only", "[1e+]"), ("n_number_dot_exp", "[1.e1]")]
        var all = cases.map { ($0.0, Array($0.1.utf8)) }
        all += [
            ("n_bom", [0xef, 0xbb, 0xbf, 0x7b, 0x7d]), ("n_latin1", [0x5b, 0x22, 0xe9, 0x22, 0x5d]), ("n_overlong", [0x5b, 0x22, 0xc0, 0xaf, 0x22, 0x5d]),
            ("n_utf8_surrogate", [0x5b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x5d]), ("n_past_10ffff", [0x5b, 0x22, 0xf4, 0x90, 0x80, 0x80, 0x22, 0x5d]),
            ("n_truncated_utf8", [0x5b, 0x22, 0xe2, 0x82, 0x22, 0x5d]), ("n_nul_after", [0x7b, 0x7d, 0x00]), ("n_utf16", [0xff, 0xfe, 0x7b, 0x00, 0x7d, 0x00]),
            ("n_continuation_alone", [0x5b, 0x22, 0x80, 0x22, 0x5d]), ("y_four_byte", [0x5b, 0x22, 0xf0, 0x9f, 0x98, 0x80, 0x22, 0x5d]),
        ]
        return all
    }()

    /// Deterministic random numbers (SplitMix64): a failure reproduces with the same seed.
    struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9e37_79b9_7f4a_7c15
            var z = state
            z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce5_e4b9
            z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
            return z ^ (z >> 31)
        }
    }

    /// Mutants of the sample input files and of the corpus: bytes replaced, inserted, deleted, truncated.
    static func mutants(count: Int, seed: UInt64) throws -> [(String, [UInt8])] {
        let samples = try ["Samples/series.json", "Samples/sessions/keynote.json", "Samples/sessions/workshop.json"].map {
            Array(try Data(contentsOf: repository.appendingPathComponent($0)))
        }
        let seeds = samples + corpus.filter { $0.0.hasPrefix("y_") }.map(\.1)
        let interesting: [UInt8] = Array(#"{}[]:,"\/*-+.0123456789eEuUdDtfn "#.utf8) + [0x00, 0x09, 0x0a, 0x0d, 0x1f, 0x7f, 0x80, 0xbf, 0xc3, 0xa9, 0xe9, 0xed, 0xa0, 0xf0, 0xf4, 0x90, 0xff]
        var random = SplitMix(state: seed)
        return (0..<count).map { index in
            var bytes = seeds[Int.random(in: 0..<seeds.count, using: &random)]
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                let at = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
                let byte = interesting.randomElement(using: &random)!
                switch Int.random(in: 0..<6, using: &random) {
                case 0 where !bytes.isEmpty: bytes[at] = byte
                case 1: bytes.insert(byte, at: at)
                case 2 where !bytes.isEmpty: bytes.remove(at: at)
                case 3: bytes = Array(bytes.prefix(at))
                case 4 where !bytes.isEmpty:
                    let end = min(bytes.count, at + Int.random(in: 1...40, using: &random))
                    bytes.insert(contentsOf: bytes[at..<end], at: Int.random(in: 0...bytes.count, using: &random))
                default: bytes.insert(contentsOf: #"\ud83d"#.utf8, at: at)
                }
            }
            return ("m\(index)", bytes)
        }
    }

    @Test func corpusCasesAreAcceptedOrRefusedByTheirName() {
        for (name, bytes) in Self.corpus where !name.hasPrefix("i_") {
            let accepted = (try? JSONValue.parse(bytes)) != nil
            #expect(accepted == name.hasPrefix("y_"), "\(name)")
        }
    }

    @Test func agreesWithStrictPython() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        let documents = Self.corpus + (try Self.mutants(count: 3000, seed: 20261201))
        var accepted = 0
        for (name, bytes) in documents {
            try Data(bytes).write(to: folder.appendingPathComponent("\(name).json"))
            let result: [UInt8]
            if let value = try? JSONValue.parse(bytes) {
                accepted += 1
                result = value.canonicalBytes
                // The canonical form of what the parser accepts parses back to itself (integral doubles
                // are written as integers, so compare the bytes).
                #expect(try JSONValue.parse(result).canonicalBytes == result, "\(name)")
            } else {
                result = Array("reject".utf8)
            }
            try Data(result).write(to: folder.appendingPathComponent("\(name).swift"))
        }
        // The mutants must exercise both sides.
        #expect(accepted > 100 && accepted < documents.count - 1000, "accepted \(accepted) of \(documents.count)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", Self.repository.appendingPathComponent("Tests/Fixtures/json/strict_oracle.py").path, folder.path]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let report = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(report.isEmpty, "disagreements with Python:\n\(report.prefix(4000))")
    }
}

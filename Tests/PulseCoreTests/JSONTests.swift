import Foundation
import Testing

@testable import PulseCore

struct CanonicalJSONTests {
    @Test func canonicalFormSortsKeysAndHasNoSpace() throws {
        let value = try JSONValue.parse(Data(#"{ "b": [1, true, null], "a": "x\"y\n", "é": {"z": 1, "A": 2} }"#.utf8))
        #expect(String(decoding: value.canonicalBytes, as: UTF8.self) == #"{"a":"x\"y\n","b":[1,true,null],"é":{"A":2,"z":1}}"#)
    }

    @Test func numbersAndEscapes() throws {
        let value: JSONValue = [
            "n": [0, 7, -7, 10, -1_000_000, .int(Int.max), .int(Int.min), .double(2.5), .double(-3)],
            "s": "tab\tcr\rnl\nquote\"back\\slash\u{01}\u{1f}é€😀/",
        ]
        let canonical = String(decoding: value.canonicalBytes, as: UTF8.self)
        #expect(canonical == #"{"n":[0,7,-7,10,-1000000,9223372036854775807,-9223372036854775808,2.5,-3],"#
            + #""s":"tab\tcr\rnl\nquote\"back\\slash\u0001\u001fé€😀/"}"#)
        #expect(try JSONValue.parse(Data(value.canonicalBytes))["s"] == value["s"])
    }

    /// Random values survive canonical and pretty encoding through Foundation's own parser.
    @Test func randomValuesRoundTrip() throws {
        var generator = SystemRandomNumberGenerator()
        func random(_ depth: Int) -> JSONValue {
            switch Int.random(in: 0..<(depth > 3 ? 4 : 6), using: &generator) {
            case 0: return .null
            case 1: return .bool(Bool.random(using: &generator))
            case 2: return .int(Int.random(in: Int.min...Int.max, using: &generator) >> Int.random(in: 0..<64, using: &generator))
            case 3: return .string(String((0..<Int.random(in: 0..<12, using: &generator)).map { _ in
                Character(Unicode.Scalar([0x01, 0x09, 0x0a, 0x22, 0x5c, 0x41, 0x7a, 0xe9, 0x20ac, 0x1f600].randomElement(using: &generator)!)!)
            }))
            case 4: return .array((0..<Int.random(in: 0..<5, using: &generator)).map { _ in random(depth + 1) })
            default:
                var fields: [String: JSONValue] = [:]
                for _ in 0..<Int.random(in: 0..<5, using: &generator) { fields["k\(Int.random(in: 0..<99, using: &generator))é"] = random(depth + 1) }
                return .object(fields)
            }
        }
        for _ in 0..<300 {
            let value = random(0)
            #expect(try JSONValue.parse(Data(value.canonicalBytes)) == value)
            #expect(try JSONValue.parse(Data(value.prettyBytes)) == value)
        }
    }

    @Test func prettyFormIsStableAndParsesBack() throws {
        let value: JSONValue = ["slides": [["n": 0, "assetHash": "ab", "bytes": 3]], "deckVersion": 1]
        let pretty = value.prettyBytes
        #expect(try JSONValue.parse(Data(pretty)) == value)
        #expect(pretty == value.prettyBytes)
        #expect(pretty.last == 0x0a)
    }

    @Test func packageVersionIgnoresItselfAndFollowsContent() {
        let manifest: JSONValue = ["session": ["id": "k"], "deckVersion": 1]
        let stamped = PackageVersion.stamped(manifest).manifest
        #expect(PackageVersion.of(stamped) == PackageVersion.of(manifest))
        #expect(stamped[PackageVersion.field]?.stringValue == PackageVersion.of(manifest))
        let changed: JSONValue = ["session": ["id": "k"], "deckVersion": 2]
        #expect(PackageVersion.of(changed) != PackageVersion.of(manifest))
        #expect(PackageVersion.of(manifest).count == 64)
    }

    @Test func assetReferencesAreFoundAnywhere() {
        let (a, b, c) = (String(repeating: "a", count: 64), String(repeating: "b", count: 64), String(repeating: "c", count: 64))
        let manifest: JSONValue = [
            "slides": [["n": 0, "assetHash": .string(a), "bytes": 1], ["n": 1, "assetHash": .string(b), "bytes": 2]],
            "speakers": [["photo": ["assetHash": .string(c), "bytes": 3, "contentType": "image/png"]]],
            "branding": ["logo": ["assetHash": .string(a), "bytes": 1]],
        ]
        #expect(Set(manifest.assetReferences.map(\.assetHash.hex)) == [a, b, c])
        #expect(manifest.assetReferences.count == 3)
        #expect(manifest.malformedAssetHashes.isEmpty)
    }

    @Test func anAssetHashThatIsNotABlobNameIsLeftOutAndReported() {
        let good = String(repeating: "0", count: 64)
        let manifest: JSONValue = [
            "slides": [["n": 0, "assetHash": "../../server/keys", "bytes": 1], ["n": 1, "assetHash": .string(good), "bytes": 2]],
            "logo": ["assetHash": .string(String(repeating: "AB", count: 32)), "bytes": 3], "x": ["assetHash": 7, "bytes": 1],
        ]
        #expect(manifest.assetReferences.map(\.assetHash.hex) == [good])
        #expect(Set(manifest.malformedAssetHashes) == ["../../server/keys", String(repeating: "AB", count: 32), "7"])
    }

    @Test func syntaxErrorsAreReported() {
        #expect(throws: JSONValue.SyntaxError.self) { try JSONValue.parse(Data("{\"a\": ".utf8)) }
    }
}

struct JSONReaderTests {
    func reader(_ text: String, _ warnings: Warnings = Warnings()) throws -> JSONReader {
        try JSONReader(file: "s.json", value: JSONValue.parse(Data(text.utf8)), warnings: warnings)
    }

    @Test func errorsNameFileAndPath() throws {
        let r = try reader(#"{"speakers": [{"name": "a"}, {"name": 3}]}"#)
        #expect(throws: InputError(file: "s.json", path: "speakers[1].name", "expected a string, found an integer")) {
            try r.objects("speakers") { try $0.string("name") }
        }
        #expect(throws: InputError(file: "s.json", path: "title", "missing (expected a string)")) { try r.string("title") }
    }

    @Test func unknownFieldsAreErrorsWithASuggestion() throws {
        let r = try reader(#"{"id": "x", "speakers": [{"name": "a", "foto": "a.png"}]}"#)
        _ = try r.string("id")
        #expect(throws: InputError(file: "s.json", path: "speakers[0].foto",
                                   #"unknown field; did you mean "photo"? (--lenient ignores unknown fields)"#)) {
            try r.objects("speakers") { speaker in
                _ = try speaker.string("name")
                _ = try speaker.optionalString("photo")
            }
        }
        let nothingClose = try reader(#"{"id": "x", "zzzzzz": 1}"#)
        _ = try nothingClose.string("id")
        #expect(throws: InputError(file: "s.json", path: "zzzzzz", "unknown field (--lenient ignores unknown fields)")) { try nothingClose.finish() }
    }

    @Test func unknownFieldsAreWarningsWhenLenient() throws {
        let warnings = Warnings(lenient: true)
        let r = try reader(#"{"id": "x", "colour": "red", "agenda": [{"title": "t", "extra": 1}]}"#, warnings)
        _ = try r.string("id")
        _ = try r.optionalString("color")
        _ = try r.objects("agenda") { try $0.string("title") }
        try r.finish()
        #expect(warnings.messages == [
            "s.json: agenda[0].extra: unknown field, ignored",
            #"s.json: colour: unknown field, ignored; did you mean "color"?"#,
        ])
    }

    @Test func patternsAndRanges() throws {
        let r = try reader(#"{"color": "red", "n": 99, "theme": "blue"}"#)
        #expect(throws: InputError.self) { try r.string("color", matching: TextFormat { $0.skip("#") }, what: "a colour") }
        #expect(throws: InputError.self) { try r.int("n", in: 1...10) }
        #expect(throws: InputError.self) { try r.string("theme", oneOf: ["light", "dark"]) }
    }
}

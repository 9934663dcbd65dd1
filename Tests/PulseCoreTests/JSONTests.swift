import Foundation
import Testing

@testable import PulseCore

struct CanonicalJSONTests {
    @Test func canonicalFormSortsKeysAndHasNoSpace() throws {
        let value = try JSONValue.parse(Data(#"{ "b": [1, true, null], "a": "x\"y\n", "é": {"z": 1, "A": 2} }"#.utf8))
        #expect(String(decoding: value.canonicalBytes, as: UTF8.self) == #"{"a":"x\"y\n","b":[1,true,null],"é":{"A":2,"z":1}}"#)
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
        let manifest: JSONValue = [
            "slides": [["n": 0, "assetHash": "aa", "bytes": 1], ["n": 1, "assetHash": "bb", "bytes": 2]],
            "speakers": [["photo": ["assetHash": "cc", "bytes": 3, "contentType": "image/png"]]],
            "branding": ["logo": ["assetHash": "aa", "bytes": 1]],
        ]
        #expect(Set(manifest.assetReferences.map(\.assetHash)) == ["aa", "bb", "cc"])
        #expect(manifest.assetReferences.count == 3)
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

    @Test func unknownFieldsAreWarnings() throws {
        let warnings = Warnings()
        let r = try reader(#"{"id": "x", "colour": "red", "agenda": [{"title": "t", "extra": 1}]}"#, warnings)
        _ = try r.string("id")
        _ = try r.objects("agenda") { try $0.string("title") }
        r.finish()
        #expect(warnings.messages == ["s.json: agenda[0].extra: unknown field, ignored", "s.json: colour: unknown field, ignored"])
    }

    @Test func patternsAndRanges() throws {
        let r = try reader(#"{"color": "red", "n": 99, "theme": "blue"}"#)
        #expect(throws: InputError.self) { try r.string("color", matching: TextFormat { $0.skip("#") }, what: "a colour") }
        #expect(throws: InputError.self) { try r.int("n", in: 1...10) }
        #expect(throws: InputError.self) { try r.string("theme", oneOf: ["light", "dark"]) }
    }
}

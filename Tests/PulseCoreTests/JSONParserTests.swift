import Foundation
import Testing

@testable import PulseCore

/// The strict parser: what it accepts, what it refuses and where it says the problem is.
struct JSONParserTests {
    func error(_ text: String) -> JSONValue.SyntaxError? { error(Array(text.utf8)) }

    func error(_ bytes: [UInt8]) -> JSONValue.SyntaxError? {
        do {
            _ = try JSONValue.parse(bytes)
            return nil
        } catch {
            return error
        }
    }

    /// Each bad document with the `line:column: message` the parser gives (the issue's cases first).
    @Test(arguments: [
        ("{\n  \"id\": \"a\"\n  \"title\": \"b\"\n}", "3:3: missing ',' between fields"),
        ("{\n  // the keynote\n  \"id\": \"a\"\n}", "2:3: comments are not allowed in JSON"),
        ("{ \"id\": \"a\" /* x */ }", "1:13: comments are not allowed in JSON"),
        ("{ \"id\": \"a\",\n  \"speakers\": [", "2:16: unexpected end of file: the array opened at line 2, column 15 is not closed"),
        ("", "1:1: empty file: expected a JSON value"),
        ("  \n ", "2:2: no JSON value, only white space"),
        ("{\"name\": \"a\tb\"}", "1:12: raw tab in a string (write \\t)"),
        ("{\"name\": \"a\nb\"}", "1:12: line break in a string (the string is not closed on its line, or write \\n)"),
        ("{\"name\": \"a\u{01}\"}", "1:12: control character U+0001 in a string (write \\u0001)"),
        ("{\"name\": \"a\\qb\"}", "1:12: invalid escape \\q (JSON knows \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)"),
        ("[\"\\ud800\"]", "1:3: lone high surrogate \\uD800 (not followed by a \\uDC00-\\uDFFF)"),
        ("[\"\\ud800\\u0041\"]", "1:3: lone high surrogate \\uD800 (followed by \\u0041)"),
        ("[\"\\udc00\"]", "1:3: lone low surrogate \\uDC00 (a UTF-16 pair starts with \\uD800-\\uDBFF)"),
        ("[\"\\u12\"]", "1:3: \\u must be followed by four hex digits"),
        ("{\"id\": \"a\",\n \"id\": \"b\"}", "2:2: duplicate field \"id\" (first at line 1, column 2)"),
        ("{\"a\": 1, \"b\": {\"a\": 1, \"a\": 2}}", "1:24: duplicate field \"a\" (first at line 1, column 16)"),
        ("{\"a\": 1,}", "1:8: trailing comma before '}'"),
        ("[1, 2,\n]", "1:6: trailing comma before ']'"),
        ("[1 2]", "1:4: missing ',' between array items"),
        ("[01]", "1:2: numbers cannot have a leading zero"),
        ("[-01]", "1:3: numbers cannot have a leading zero"),
        ("[1.]", "1:4: a digit must follow the '.' of a number"),
        ("[.5]", "1:2: a number needs a digit before '.'"),
        ("[+1]", "1:2: a number cannot start with '+'"),
        ("[1e]", "1:4: a digit must follow the exponent of a number"),
        ("[0x1F]", "1:3: 'x' in a number"),
        ("[1e400]", "1:2: number out of range"),
        ("[-]", "1:3: a '-' must be followed by a digit"),
        ("[NaN]", "1:2: unknown word 'NaN' (JSON has true, false and null; strings need double quotes)"),
        ("[-Infinity]", "1:2: unknown word '-Infinity'"),
        ("{\"a\": True}", "1:7: unknown word 'True' (JSON has true, false and null; strings need double quotes)"),
        ("{'a': 1}", "1:2: field names use double quotes, found '"),
        ("{a: 1}", "1:2: field name 'a' needs double quotes"),
        ("{\"a\" 1}", "1:6: expected ':' after field name \"a\", found '1'"),
        ("{\"a\": 1} x", "1:10: 'x' after the end of the JSON value"),
        ("{\"a\": 1}\n{\"b\": 2}", "2:1: '{' after the end of the JSON value"),
        ("{\"a\": 1", "1:8: unexpected end of file: the object opened at line 1, column 1 is not closed"),
        ("{\"a\": \"b", "1:9: unexpected end of file: the string opened at line 1, column 7 is not closed"),
        ("{\"é\": \"ü\", \"x\" 2}", "1:16: expected ':' after field name \"x\", found '2'"),
    ])
    func refusesWithPosition(_ text: String, _ expected: String) {
        #expect(error(text)?.description == expected, "\(text.debugDescription)")
    }

    @Test func refusesBadBytes() {
        // Latin-1 é, an overlong '/', a UTF-8 encoded surrogate, a code point past U+10FFFF, a truncated sequence.
        #expect(error([0x5b, 0x22, 0x63, 0x61, 0x66, 0xe9, 0x22, 0x5d])?.description == "1:6: invalid UTF-8 (bytes E9 22 5D): save the file as UTF-8")
        #expect(error([0x5b, 0x22, 0xc0, 0xaf, 0x22, 0x5d])?.message.hasPrefix("invalid UTF-8") == true)
        #expect(error([0x5b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x5d])?.message.hasPrefix("invalid UTF-8") == true)
        #expect(error([0x5b, 0x22, 0xf4, 0x90, 0x80, 0x80, 0x22, 0x5d])?.message.hasPrefix("invalid UTF-8") == true)
        #expect(error([0x5b, 0x22, 0xe2, 0x82])?.message.hasPrefix("invalid UTF-8") == true)
        #expect(error([0xef, 0xbb, 0xbf, 0x7b, 0x7d])?.description == "1:1: the file starts with a byte order mark (BOM): save it as UTF-8 without BOM")
        #expect(error([0x7b, 0x7d, 0x00])?.description == "1:3: U+0000 after the end of the JSON value")
        #expect(error([0x5b, 0xc3, 0xa9, 0x5d])?.description == "1:2: expected a value, found 'é' (U+E9)")
    }

    @Test func nestingIsLimited() {
        let deepest = String(repeating: "[", count: JSONValue.maxNesting) + String(repeating: "]", count: JSONValue.maxNesting)
        #expect(error(deepest) == nil)
        let tooDeep = String(repeating: "[", count: JSONValue.maxNesting + 1) + String(repeating: "]", count: JSONValue.maxNesting + 1)
        #expect(error(tooDeep)?.description == "1:513: nested deeper than 512 arrays and objects")
        // No stack overflow on a hostile document.
        #expect(error(String(repeating: "{\"a\":[", count: 100_000))?.message == "nested deeper than 512 arrays and objects")
    }

    /// Columns count characters, not bytes: an error after "é" is one column further, not two.
    @Test func columnsCountCharacters() {
        #expect(error("{\"ééé\": 1 \"b\": 2}")?.column == 11)
        #expect(error("{\"😀\": 1 \"b\": 2}")?.column == 9)
        #expect(error("{\r\n\"a\": 1 \"b\": 2}")?.description == "2:8: missing ',' between fields")
    }

    @Test func acceptsValidDocuments() throws {
        let value = try JSONValue.parse(Array(#" { "a" : [ 1 , -0 , 1.5e3 , -2E-2 , 0.0 , true , false , null ] , "b" : "\u00e9\ud83d\ude00\"\\\/\b\f\n\r\t" , "c" : { } , "d" : [ ] } "#.utf8))
        #expect(value == .object([
            "a": [1, 0, .double(1500), .double(-0.02), .double(0), true, false, .null],
            "b": .string("é😀\"\\/\u{08}\u{0c}\n\r\t"), "c": .object([:]), "d": .array([]),
        ]))
        #expect(try JSONValue.parse(Array("9223372036854775807".utf8)) == .int(Int.max))
        #expect(try JSONValue.parse(Array("-9223372036854775808".utf8)) == .int(Int.min))
        #expect(try JSONValue.parse(Array("9223372036854775808".utf8)) == .double(9223372036854775808))
        #expect(try JSONValue.parse(Array("\"\\u0000\"".utf8)) == .string("\u{0}"))
        #expect(try JSONValue.parse(Array("\"caf\u{e9} \u{7f}\"".utf8)) == .string("café \u{7f}"))
    }

    @Test func inputErrorsNameFileLineAndColumn() {
        #expect(throws: InputError(file: "talk.json:2:3", "comments are not allowed in JSON")) {
            try JSONValue.parse(Array("{\n  // x\n}".utf8), file: "talk.json")
        }
    }

    @Test func decodesCodableTypesThroughTheStrictParser() throws {
        let table = KeyTable(packageId: PackageID(String(repeating: "7", count: 32)), sessionId: "s", deckVersion: 3, packageVersion: "v",
                             slides: [.init(n: 0, assetHash: Digest(of: [UInt8]("slide".utf8)), keyB64: "k", nonceB64: "n")])
        #expect(try JSONValue.decode(KeyTable.self, from: table.fileBytes) == table)
        let noId = #"{"sessionId": "s", "deckVersion": 1, "packageVersion": "v", "slides": []}"#
        #expect(try JSONValue.decode(KeyTable.self, from: Array(noId.utf8)).packageId == nil)
        #expect(throws: DecodingError.self) { try JSONValue.decode(KeyTable.self, from: Array(#"{"sessionId": 1}"#.utf8)) }
        #expect(throws: DecodingError.self) {
            try JSONValue.decode(KeyTable.self, from: Array(#"{"sessionId": "s", "deckVersion": 1.5, "packageVersion": "v", "slides": []}"#.utf8))
        }
        #expect(throws: JSONValue.SyntaxError.self) {
            try JSONValue.decode(KeyTable.self, from: Array(#"{"sessionId": "s", "sessionId": "t"}"#.utf8))
        }
        let index = PackageIndex(packageId: PackageID("0123456789abcdef0123456789abcdef")!, sessions: ["k": .init(packageVersion: "v", deckVersion: 1, deckDigest: "d", highestDeckVersion: 2)],
                                 history: ["sessions/k": [.init(packageVersion: "v", refs: "r", publishedAt: "t", gated: "g")]])
        #expect(try JSONValue.decode(PackageIndex.self, from: index.fileBytes) == index)
    }
}

import Foundation
import PulseCore
@testable import PulseCrypto

/// One Project Wycheproof vector file (Tests/Fixtures/wycheproof, Apache-2.0, see its LICENSE), read
/// strictly: the number of cases must equal the file's `numberOfTests`, every tcId is unique, and a
/// field that is missing, of the wrong type or not hex fails the test instead of becoming empty bytes
/// (an empty key or message would make a vector test something else, silently).
struct WycheproofFile {
    let name: String
    let numberOfTests: Int
    let groups: [Group]

    /// A test group: its parameters (`keySize`, `publicKeyDer`, …) and its cases.
    struct Group {
        let file: String
        let index: Int
        let fields: [String: JSONValue]
        let tests: [Case]

        func int(_ key: String) throws -> Int {
            guard let value = fields[key]?.intValue else { throw WycheproofError.field(file, "group \(index)", key, "not an integer") }
            return value
        }

        func string(_ key: String) throws -> String {
            guard let value = fields[key]?.stringValue else { throw WycheproofError.field(file, "group \(index)", key, "not a string") }
            return value
        }

        func hex(_ key: String) throws -> [UInt8] {
            try WycheproofFile.hex(string(key), file: file, at: "group \(index)", key: key)
        }
    }

    /// One test case.
    struct Case {
        enum Result: String { case valid, invalid, acceptable }

        let file: String
        let id: Int
        let result: Result
        let flags: [String]
        let comment: String
        let fields: [String: JSONValue]

        func string(_ key: String) throws -> String {
            guard let value = fields[key]?.stringValue else { throw WycheproofError.field(file, "tcId \(id)", key, "missing or not a string") }
            return value
        }

        func int(_ key: String) throws -> Int {
            guard let value = fields[key]?.intValue else { throw WycheproofError.field(file, "tcId \(id)", key, "missing or not an integer") }
            return value
        }

        /// The bytes of a hex field; throws when it is missing or not hex of whole bytes.
        func hex(_ key: String) throws -> [UInt8] {
            try WycheproofFile.hex(string(key), file: file, at: "tcId \(id)", key: key)
        }
    }

    /// Every case of every group, in file order.
    var cases: [(group: Group, test: Case)] {
        groups.flatMap { group in group.tests.map { (group, $0) } }
    }

    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../Fixtures/wycheproof").standardizedFileURL

    /// Loads `Tests/Fixtures/wycheproof/<name>` and checks its shape.
    static func load(_ name: String) throws -> WycheproofFile {
        try parse(Data(contentsOf: folder.appendingPathComponent(name)), name: name)
    }

    /// Parses vector-file JSON named `name` (for error messages) and checks its shape.
    static func parse(_ data: Data, name: String) throws -> WycheproofFile {
        let root = try JSONValue.parse(data)
        guard let declared = root["numberOfTests"]?.intValue else { throw WycheproofError.field(name, "file", "numberOfTests", "missing") }
        guard let groupValues = root["testGroups"]?.arrayValue, !groupValues.isEmpty else {
            throw WycheproofError.field(name, "file", "testGroups", "missing or empty")
        }
        var groups: [Group] = []
        var seen = Set<Int>()
        for (index, value) in groupValues.enumerated() {
            guard let fields = value.objectValue, let testValues = fields["tests"]?.arrayValue else {
                throw WycheproofError.field(name, "group \(index)", "tests", "missing")
            }
            var tests: [Case] = []
            for testValue in testValues {
                guard let test = testValue.objectValue, let id = test["tcId"]?.intValue else {
                    throw WycheproofError.field(name, "group \(index)", "tcId", "a case without an integer tcId")
                }
                guard seen.insert(id).inserted else { throw WycheproofError.field(name, "tcId \(id)", "tcId", "repeated") }
                guard let resultText = test["result"]?.stringValue, let result = Case.Result(rawValue: resultText) else {
                    throw WycheproofError.field(name, "tcId \(id)", "result", "not valid, invalid or acceptable")
                }
                guard let flagValues = test["flags"]?.arrayValue else { throw WycheproofError.field(name, "tcId \(id)", "flags", "missing") }
                let flags = flagValues.compactMap(\.stringValue)
                guard flags.count == flagValues.count else { throw WycheproofError.field(name, "tcId \(id)", "flags", "not all strings") }
                tests.append(Case(
                    file: name, id: id, result: result, flags: flags, comment: test["comment"]?.stringValue ?? "", fields: test))
            }
            groups.append(Group(file: name, index: index, fields: fields, tests: tests))
        }
        let file = WycheproofFile(name: name, numberOfTests: declared, groups: groups)
        let count = groups.reduce(0) { $0 + $1.tests.count }
        guard count == declared else {
            throw WycheproofError.field(name, "file", "numberOfTests", "declares \(declared) cases, the groups hold \(count)")
        }
        return file
    }

    static func hex(_ text: String, file: String, at place: String, key: String) throws -> [UInt8] {
        guard let bytes = Hex.decode(text) else { throw WycheproofError.field(file, place, key, "not hex of whole bytes") }
        return bytes
    }
}

/// A vector file that does not have the shape the runner relies on.
struct WycheproofError: Error, CustomStringConvertible {
    let description: String

    static func field(_ file: String, _ place: String, _ key: String, _ problem: String) -> WycheproofError {
        WycheproofError(description: "\(file) \(place): \(key) \(problem)")
    }
}

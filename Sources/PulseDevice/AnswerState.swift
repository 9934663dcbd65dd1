import Foundation
import PulseCore
import PulseStore
import PulseSystem

/// `answers.json`: what the device has accepted of the server's signed answers (docs/device.md, "Signed
/// answers"), so that an older answer, or one frozen past its expiry, is refused even when it is validly
/// signed. Replaced whole in one rename (0600); a sync killed at any moment leaves the previous state or
/// the new one.
///
/// ```json
/// {"format": "pulse-device-answers/1", "signs": true, "verifiedTime": 1796280000,
///  "keys": {"keys": [<JWK>, …]}, "keySetSeq": 1,
///  "answers": {"/api/sync/manifest?session=keynote": {"seq": 7, "packageVersion": "8994d8d6…", "iat": 1796279000},
///              "/api/sync/keys?session=keynote": {"seq": 7, "deckVersion": 3}}}
/// ```
public struct AnswerState: Equatable, Sendable {
    static let format = "pulse-device-answers/1"
    /// The longest file read, and the most answers kept: bounds the work of a damaged or planted file.
    static let maxByteCount = 1 << 20
    static let maxAnswers = 10_000

    /// The highest answer accepted for one route and query.
    public struct Accepted: Equatable, Sendable {
        public var seq: Int
        public var packageVersion: String?
        public var deckVersion: Int?
        /// When the server signed the accepted answer: at the same seq, only a later answer may name
        /// another packageVersion (a resource released by the server's clock changes the manifest alone).
        public var iat: Int?

        public init(seq: Int, packageVersion: String? = nil, deckVersion: Int? = nil, iat: Int? = nil) {
            self.seq = seq
            self.packageVersion = packageVersion
            self.deckVersion = deckVersion
            self.iat = iat
        }
    }

    /// Whether the server signs its answers: true once a key set was trusted (then signatures are required
    /// forever after), false when `GET /api/sync/answer-keys` answered 404, nil when never asked.
    public var signs: Bool?
    /// The trusted answer keys: the key set document as the server published it (`{"keys": […]}`).
    public var keySet: JSONValue?
    /// The `seq` (generation) of the trusted key set's signature.
    public var keySetSeq = 0
    /// The latest server time (Unix seconds) this device has verified: the highest `iat` of a signed answer or
    /// key set it accepted. Only signed times count: `GET /api/sync/time` is unsigned (a proxy could set it
    /// anywhere), and display-only by the contract. The freeze rule compares `exp` with it.
    public var verifiedTime = 0
    /// Keyed by `route?query` (or `route` when the query is empty).
    public var answers: [String: Accepted] = [:]

    public init(signs: Bool? = nil, keySet: JSONValue? = nil, keySetSeq: Int = 0, verifiedTime: Int = 0, answers: [String: Accepted] = [:]) {
        self.signs = signs
        self.keySet = keySet
        self.keySetSeq = keySetSeq
        self.verifiedTime = verifiedTime
        self.answers = answers
    }

    /// The key of `answers` for a request.
    public static func key(route: String, query: String) -> String { query.isEmpty ? route : route + "?" + query }

    /// Folds in the `iat` of a signed answer just verified; never goes back.
    public mutating func verified(iat seconds: Int) { verifiedTime = max(verifiedTime, seconds) }

    // MARK: The file

    /// The state in `url`; a missing file is the empty state (a device enrolled before signed answers).
    /// - Throws: `DeviceError.storage` naming the file and what is wrong with it (too long, not JSON, a member
    ///   of the wrong type): never a crash, and never a silently emptied state (that would undo the rollback
    ///   protection).
    public static func read(_ url: URL) throws -> AnswerState {
        guard FileManager.default.fileExists(atPath: url.path) else { return AnswerState() }
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw DeviceError(.storage, "\(url.path): cannot read the answer state: \(Errno.describe(error))")
        }
        func damaged(_ why: String) -> DeviceError {
            DeviceError(.storage, "\(url.path) is damaged (\(why)); the rollback protection depends on it: "
                + "restore it, or enroll the device again in a new folder")
        }
        guard data.count <= maxByteCount else { throw damaged("longer than \(maxByteCount) bytes") }
        let value: JSONValue
        do { value = try JSONValue.parse(data) } catch { throw damaged("not JSON: \(error)") }
        guard value["format"]?.stringValue == format else { throw damaged("not a \(format) file") }
        var state = AnswerState()
        if let signs = value["signs"], signs != .null {
            guard case let .bool(flag) = signs else { throw damaged("\"signs\" is not true, false or null") }
            state.signs = flag
        }
        if let keys = value["keys"], keys != .null {
            guard keys["keys"]?.arrayValue != nil else { throw damaged("\"keys\" is not a key set") }
            state.keySet = keys
        }
        state.keySetSeq = try int(value, "keySetSeq", damaged)
        state.verifiedTime = try int(value, "verifiedTime", damaged)
        guard let answers = value["answers"]?.objectValue else { throw damaged("no \"answers\" object") }
        guard answers.count <= maxAnswers else { throw damaged("more than \(maxAnswers) answers") }
        for (key, entry) in answers {
            guard let seq = entry["seq"]?.intValue, seq >= 0 else { throw damaged("\(key.debugDescription) has no \"seq\"") }
            var accepted = Accepted(seq: seq)
            if let version = entry["packageVersion"] {
                guard let text = version.stringValue else { throw damaged("\(key.debugDescription): \"packageVersion\" is not a string") }
                accepted.packageVersion = text
            }
            if let deck = entry["deckVersion"] {
                guard let number = deck.intValue else { throw damaged("\(key.debugDescription): \"deckVersion\" is not an integer") }
                accepted.deckVersion = number
            }
            if let iat = entry["iat"] {
                guard let number = iat.intValue else { throw damaged("\(key.debugDescription): \"iat\" is not an integer") }
                accepted.iat = number
            }
            state.answers[key] = accepted
        }
        if state.signs == true, state.keySet == nil { throw damaged("the server signs but no keys are trusted") }
        // A file written before only signed times counted has "serverTime" instead, which `GET /api/sync/time`
        // (unsigned) could have pushed anywhere: it is ignored, and the verified time is the newest recorded `iat`.
        if value["verifiedTime"] == nil { state.verifiedTime = state.answers.values.compactMap(\.iat).max() ?? 0 }
        return state
    }

    private static func int(_ value: JSONValue, _ name: String, _ damaged: (String) -> DeviceError) throws -> Int {
        guard let member = value[name] else { return 0 }
        guard let number = member.intValue, number >= 0 else { throw damaged("\"\(name)\" is not a whole number") }
        return number
    }

    /// The file's bytes (pretty JSON, sorted keys).
    public var bytes: [UInt8] {
        var answers: [String: JSONValue] = [:]
        for (key, accepted) in self.answers {
            var fields: [String: JSONValue] = ["seq": .int(accepted.seq)]
            if let version = accepted.packageVersion { fields["packageVersion"] = .string(version) }
            if let deck = accepted.deckVersion { fields["deckVersion"] = .int(deck) }
            if let iat = accepted.iat { fields["iat"] = .int(iat) }
            answers[key] = .object(fields)
        }
        return JSONValue.object([
            "format": .string(Self.format), "signs": signs.map(JSONValue.bool) ?? .null, "keys": keySet ?? .null,
            "keySetSeq": .int(keySetSeq), "verifiedTime": .int(verifiedTime), "answers": .object(answers),
        ]).prettyBytes
    }

    /// Replaces `url` with this state in one rename (temp file, fsync, rename, fsync of the folder), 0600.
    public func write(_ url: URL) throws {
        do { try AtomicFile.write(bytes, to: url, mode: 0o600) } catch {
            throw DeviceError(.storage, "cannot write \(url.path): \(error)")
        }
    }
}

import CPostgres
import Foundation

/// Where and how to connect: a `postgresql://user:password@host:port/database?sslmode=…` URL (or a
/// libpq `key=value` string), checked by libpq's own parser so that every form libpq accepts works
/// (a Unix-socket folder as `host=/run/postgresql` or `postgresql:///db?host=/run/postgresql`,
/// several hosts, `sslmode`, `sslrootcert`, …).
///
/// The password never appears in `description`, in an error, or anywhere this module prints: use
/// `redacted` to name the database in a message.
public struct PostgresConfiguration: Sendable, CustomStringConvertible {
    /// libpq keywords and values, in libpq's order (the password among them).
    private(set) var parameters: [(keyword: String, value: String)]
    /// Every spelling of the password seen in the text given (raw and percent-decoded), for scrubbing.
    let secrets: [String]

    /// Parses `text` (a URL or a `key=value` string).
    /// - Throws: `PostgresError(.configuration)` with libpq's reason (the password scrubbed from it).
    public init(_ text: String) throws(PostgresError) {
        let secrets = Self.passwordSpellings(in: text)
        var message: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(text, &message) else {
            let reason = message.map { String(cString: $0) } ?? "out of memory"
            if let message { PQfreemem(message) }
            throw PostgresError(.configuration, message: Self.scrub(Self.oneLine(reason), secrets), operation: "read the database URL")
        }
        defer { PQconninfoFree(options) }
        var parameters: [(String, String)] = []
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { parameters.append((String(cString: keyword), String(cString: value))) }
            option += 1
        }
        let password = parameters.first { $0.0 == "password" }?.1
        self.parameters = parameters
        self.secrets = (secrets + [password].compactMap { $0 }).filter { !$0.isEmpty }
    }

    /// The value of a libpq keyword (`host`, `port`, `dbname`, `user`, `sslmode`, …), if given.
    public subscript(keyword: String) -> String? {
        parameters.last { $0.keyword == keyword }?.value
    }

    /// The same configuration with `keyword` set to `value` (replacing any value given).
    public func setting(_ keyword: String, _ value: String) -> PostgresConfiguration {
        var copy = self
        copy.parameters.removeAll { $0.keyword == keyword }
        copy.parameters.append((keyword, value))
        return copy
    }

    /// The same configuration with `keyword` set to `value` unless the text already set it.
    public func defaulting(_ keyword: String, _ value: String) -> PostgresConfiguration {
        self[keyword] == nil ? setting(keyword, value) : self
    }

    /// `postgresql://user:***@host:port/database?sslmode=…`: safe for logs and error lines.
    public var redacted: String {
        var text = "postgresql://"
        if let user = self["user"] { text += user + (self["password"] == nil ? "" : ":***") + "@" }
        let host = self["host"] ?? self["hostaddr"] ?? ""
        text += host.hasPrefix("/") ? "[\(host)]" : host
        if let port = self["port"] { text += ":" + port }
        text += "/" + (self["dbname"] ?? "")
        if let mode = self["sslmode"] { text += "?sslmode=" + mode }
        return text
    }

    public var description: String { redacted }

    /// `text` with every spelling of the password replaced by `***`.
    func scrub(_ text: String) -> String { Self.scrub(text, secrets) }

    static func scrub(_ text: String, _ secrets: [String]) -> String {
        secrets.sorted { $0.count > $1.count }.reduce(text) { $0.replacingOccurrences(of: $1, with: "***") }
    }

    /// libpq messages end in a newline and may span lines: one line for an error message.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: "; ")
    }

    /// The password part of a URL's authority (`scheme://user:password@host`), raw and percent-decoded,
    /// found without trusting the URL to be well-formed (a malformed one is quoted in libpq's message).
    static func passwordSpellings(in text: String) -> [String] {
        guard let scheme = text.range(of: "://") else {
            // key=value form: password=… up to the next space.
            guard let start = text.range(of: "password=") else { return [] }
            let value = text[start.upperBound...].prefix { $0 != " " }
            return [String(value), value.trimmingCharacters(in: CharacterSet(charactersIn: "'"))]
        }
        let rest = text[scheme.upperBound...].prefix { $0 != "?" }
        guard let at = rest.lastIndex(of: "@") else { return [] }
        let authority = rest[..<at]
        guard let colon = authority.firstIndex(of: ":") else { return [] }
        let raw = String(authority[authority.index(after: colon)...])
        return [raw, raw.removingPercentEncoding ?? raw]
    }
}

import Foundation

/// An AWS access key. Its `description` never shows the secret or the session token.
public struct AWSCredentials: Sendable, Equatable, CustomStringConvertible {
    public var accessKeyId: String
    public var secretAccessKey: String
    public var sessionToken: String?

    public init(accessKeyId: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyId = accessKeyId
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    public var description: String { "AWSCredentials(\(accessKeyId), secret redacted)" }

    /// Finds credentials the way the AWS CLI does, in this order:
    /// 1. `profile` (from `--profile`): that section of the shared credentials file;
    /// 2. `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`);
    /// 3. the `AWS_PROFILE` section (or `default`) of the shared credentials file
    ///    (`AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`).
    /// - Throws: `OpsError` (usage) naming what was looked at, never a secret.
    public static func resolve(profile: String?, environment: [String: String], home: String?) throws -> AWSCredentials {
        if profile == nil, let id = environment["AWS_ACCESS_KEY_ID"], !id.isEmpty {
            guard let secret = environment["AWS_SECRET_ACCESS_KEY"], !secret.isEmpty else {
                throw OpsError(.usage, "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not")
            }
            let token = environment["AWS_SESSION_TOKEN"].flatMap { $0.isEmpty ? nil : $0 }
            return AWSCredentials(accessKeyId: id, secretAccessKey: secret, sessionToken: token)
        }
        let name = profile ?? environment["AWS_PROFILE"].flatMap { $0.isEmpty ? nil : $0 } ?? "default"
        let path = environment["AWS_SHARED_CREDENTIALS_FILE"]
            ?? home.map { URL(fileURLWithPath: $0).appendingPathComponent(".aws/credentials").path }
        guard let path, let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw OpsError(.usage, "", "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
                + "or add profile [\(name)] to \(path ?? "~/.aws/credentials")")
        }
        let section = parseINI(text)[name] ?? [:]
        guard let id = section["aws_access_key_id"], let secret = section["aws_secret_access_key"] else {
            throw OpsError(.usage, path, "profile [\(name)] has no aws_access_key_id and aws_secret_access_key")
        }
        return AWSCredentials(accessKeyId: id, secretAccessKey: secret, sessionToken: section["aws_session_token"])
    }

    /// `[section]` → `key = value` pairs; `#`/`;` comment lines; `[profile x]` is read as `x`.
    static func parseINI(_ text: String) -> [String: [String: String]] {
        var sections: [String: [String: String]] = [:]
        var current: String?
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("["), line.hasSuffix("]") {
                var name = line.dropFirst().dropLast().trimmingCharacters(in: .whitespaces)
                if name.hasPrefix("profile ") { name = String(name.dropFirst(8)).trimmingCharacters(in: .whitespaces) }
                current = name
                sections[name, default: [:]] = sections[name] ?? [:]
                continue
            }
            guard let current, let equals = line.firstIndex(of: "=") else { continue }
            let key = line[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            sections[current]![key] = value
        }
        return sections
    }
}

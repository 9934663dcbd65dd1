import Foundation
import PulseCommandLine

/// A `--to` (or gc) argument: a folder path, or `s3://bucket/prefix` with endpoint, region and profile.
enum TargetSpec {
    case folder(URL)
    case s3(bucket: String, prefix: String)

    static let commonOptions: [Option] = [
        .value("endpoint", "<url>", help: "S3 endpoint, for example http://127.0.0.1:9000 (default: AWS for --region). Path-style addressing."),
        .value("region", "<region>", help: "S3 region (default: AWS_REGION, AWS_DEFAULT_REGION, us-east-1)."),
        .value("profile", "<name>", help: "Profile in ~/.aws/credentials (default: AWS_* variables, then AWS_PROFILE, then default)."),
        .value("retries", "<n>", help: "Retries of a failed S3 request, with backoff (default 4)."),
        .value("wait", "<duration>", help: "Wait this long for another push or gc of the target to finish, e.g. 10m (default 0: fail at once, exit 75)."),
        .flag("json", help: "Print the result as one JSON object."),
    ]

    static func parse(_ text: String) throws -> TargetSpec {
        guard text.hasPrefix("s3://") else {
            guard !text.isEmpty else { throw UsageError("empty target") }
            // `s3:/bucket`, `S3://bucket`, `gs://…`, `https://…`: a mistyped or unsupported URL, never a folder named `s3:`.
            if let scheme = scheme(of: text) {
                let hint = scheme.lowercased() == "s3" ? "write s3://bucket/prefix (lowercase, two slashes)" : "targets are a folder or s3://bucket/prefix"
                throw UsageError("\"\(text)\" is not a supported target (\(scheme): is not s3://): \(hint); a folder whose name starts with \"\(scheme):\" is ./\(text)")
            }
            return .folder(URL(fileURLWithPath: text))
        }
        let rest = text.dropFirst("s3://".count)
        let bucket = String(rest.prefix(while: { $0 != "/" }))
        guard !bucket.isEmpty else { throw UsageError("\"\(text)\" names no bucket: use s3://bucket/prefix") }
        return .s3(bucket: bucket, prefix: String(rest.dropFirst(bucket.count)))
    }

    /// The URL scheme `text` starts with (`s3`, `S3`, `https`, …), if it looks like a URL: letters, then
    /// letters, digits, `+`, `-` or `.`, then a colon.
    static func scheme(of text: String) -> String? {
        guard let colon = text.firstIndex(of: ":"), let first = text.first, first.isASCII, first.isLetter else { return nil }
        let scheme = text[..<colon]
        guard scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else { return nil }
        return String(scheme)
    }

    /// `--wait`, in seconds (0 without it).
    static func wait(_ arguments: Arguments) throws -> TimeInterval {
        try arguments.value("wait").map { try GCCommand.parseDuration($0, option: "--wait") } ?? 0
    }

    /// The target, with credentials resolved for S3. S3 options on a folder target are a usage error.
    func make(_ arguments: Arguments, environment: OpsEnvironment) throws -> any PushTarget {
        switch self {
        case let .folder(url):
            for name in ["endpoint", "region", "profile"] where arguments.value(name) != nil {
                throw UsageError("--\(name) applies to s3:// targets only")
            }
            return FolderTarget(root: url)
        case let .s3(bucket, prefix):
            let variables = environment.variables
            let region = arguments.value("region") ?? variables["AWS_REGION"] ?? variables["AWS_DEFAULT_REGION"] ?? "us-east-1"
            let endpointText = arguments.value("endpoint") ?? variables["AWS_ENDPOINT_URL_S3"] ?? variables["AWS_ENDPOINT_URL"]
                ?? "https://s3.\(region).amazonaws.com"
            guard let endpoint = URL(string: endpointText), ["http", "https"].contains(endpoint.scheme ?? ""),
                  endpoint.host != nil else {
                throw UsageError("--endpoint must be an http:// or https:// URL, got \"\(endpointText)\"")
            }
            let credentials = try AWSCredentials.resolve(
                profile: arguments.value("profile"), environment: variables, home: environment.home)
            let retries = try arguments.int("retries", in: 0...10) ?? 4
            let client = S3Client(endpoint: endpoint, region: region, bucket: bucket, credentials: credentials, retries: retries)
            return S3Target(client: client, prefix: prefix)
        }
    }
}

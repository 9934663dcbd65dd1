import Foundation
import PulseCommandLine
import PulseOps

/// A `--to` (or gc) argument: a folder path, or `s3://bucket/prefix` with endpoint, region and profile.
enum TargetSpec {
    case folder(URL)
    case s3(bucket: String, prefix: String)

    static let endpoint = Option.value(
        "endpoint", "<url>", help: "S3 endpoint, for example http://127.0.0.1:9000 (default: AWS for --region). Path-style addressing.")
    static let region = Option.value("region", "<region>", help: "S3 region (default: AWS_REGION, AWS_DEFAULT_REGION, us-east-1).")
    static let profile = Option.value(
        "profile", "<name>", help: "Profile in ~/.aws/credentials (default: AWS_* variables, then AWS_PROFILE, then default).")
    static let retries = Option.int("retries", "<n>", in: 0...10, help: "Retries of a failed S3 request, with backoff (default 4).")
    /// `--wait`, in seconds (0 without it).
    static let wait = Option.value(
        "wait", "<duration>", help: "Wait this long for another push or gc of the target to finish, e.g. 10m (default 0: fail at once, exit 75)."
    ) { text in try GCCommand.parseDuration(text, option: "--wait") }
    static let json = Option.flag("json", help: "Print the result as one JSON object.")

    /// The options push and gc share, in their help's order.
    static let commonOptions: [any CommandOption] = [endpoint, region, profile, retries, wait, json]

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

    /// Checks the target's options against its kind, before any work (the commands' validate step): S3
    /// options on a folder target, or an endpoint that is not an http(s) URL, are usage errors.
    func validate(_ arguments: Arguments, environment: OpsEnvironment) throws {
        switch self {
        case .folder:
            for handle in [Self.endpoint, Self.region, Self.profile] where arguments[handle] != nil {
                throw UsageError("\(handle.spelling) applies to s3:// targets only")
            }
        case .s3:
            _ = try Self.s3Endpoint(arguments, environment: environment)
        }
    }

    /// The S3 region and endpoint: the options, else the AWS variables, else AWS for the region.
    static func s3Endpoint(_ arguments: Arguments, environment: OpsEnvironment) throws -> (region: String, endpoint: URL) {
        let variables = environment.variables
        let region = arguments[Self.region] ?? variables["AWS_REGION"] ?? variables["AWS_DEFAULT_REGION"] ?? "us-east-1"
        let endpointText = arguments[Self.endpoint] ?? variables["AWS_ENDPOINT_URL_S3"] ?? variables["AWS_ENDPOINT_URL"]
            ?? "https://s3.\(region).amazonaws.com"
        guard let endpoint = URL(string: endpointText), ["http", "https"].contains(endpoint.scheme ?? ""), endpoint.host != nil else {
            throw UsageError("--endpoint must be an http:// or https:// URL, got \"\(endpointText)\"")
        }
        return (region, endpoint)
    }

    /// The target, with credentials resolved for S3.
    func make(_ arguments: Arguments, environment: OpsEnvironment) throws -> any PushTarget {
        try validate(arguments, environment: environment)
        switch self {
        case let .folder(url):
            return FolderTarget(root: url)
        case let .s3(bucket, prefix):
            let (region, endpoint) = try Self.s3Endpoint(arguments, environment: environment)
            let credentials = try AWSCredentials.resolve(profile: arguments[Self.profile], environment: environment.variables, home: environment.home)
            let client = S3Client(endpoint: endpoint, region: region, bucket: bucket, credentials: credentials, retries: arguments[Self.retries] ?? 4)
            return S3Target(client: client, prefix: prefix)
        }
    }
}

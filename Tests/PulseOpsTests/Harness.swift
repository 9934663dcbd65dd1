import Foundation
import PulseCommandLine
import PulseCore
import PulseStore
import PulseTestSupport
import Synchronization
import Testing
@testable import PulseOps
@testable import PulseOpsCLI

/// The two kinds of push target; the push and gc suites run once per kind (restic's backend tests).
enum TargetKind: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case folder, s3
    var testDescription: String { rawValue }
}

/// One target of a kind, plus how to name it on the command line.
struct Harness {
    let kind: TargetKind
    let target: any PushTarget
    /// `--to` value or gc positional.
    let location: String
    /// Extra command-line options (endpoint, region, retries).
    let options: [String]
    /// Environment variables (credentials) for the CLI.
    let variables: [String: String]
    /// The folder target's temporary folder, removed with the harness (an S3 target has none).
    let scratch: TestFolder?

    init(_ kind: TargetKind) throws {
        self.kind = kind
        switch kind {
        case .folder:
            let folder = try TestFolder("pulse-target")
            scratch = folder
            let root = folder.url.appendingPathComponent("cdn")
            target = FolderTarget(root: root)
            location = root.path
            options = []
            variables = [:]
        case .s3:
            let moto = try MotoServer.require()
            let bucket = try moto.makeBucket()
            target = S3Target(client: moto.client(bucket: bucket), prefix: "live/pulse")
            location = "s3://\(bucket)/live/pulse"
            options = ["--endpoint", moto.endpoint.absoluteString, "--region", "us-east-1", "--retries", "1"]
            variables = ["AWS_ACCESS_KEY_ID": moto.credentials.accessKeyId, "AWS_SECRET_ACCESS_KEY": moto.credentials.secretAccessKey]
            scratch = nil
        }
    }

    /// Every file path on the target but its lease (`.lock`, `.pulse-lease`), which push and gc take.
    func paths() throws -> Set<String> { Set(try target.list(under: "").map(\.path)).subtracting(leaseFiles) }
}

/// The lease files push and gc leave (a folder's lock file stays; an S3 lease is deleted when released).
let leaseFiles: Set<String> = [".lock", ".pulse-lease"]

/// Output of one CLI run.
struct CLIResult {
    var code: Int32
    var out: [String]
    var err: String
}

/// Runs a push/gc command as the tool would, with captured output.
func runCLI(
    _ make: (OpsEnvironment) -> Command, _ arguments: [String], variables: [String: String] = [:],
    home: String? = nil, now: Date = Date()
) -> CLIResult {
    let out = Mutex<[String]>([])
    let err = Mutex<String>("")
    let environment = OpsEnvironment(
        variables: variables, home: home ?? "/nonexistent-home",
        standardOutput: { line in out.withLock { $0.append(line) } },
        standardError: { text in err.withLock { $0 += text } }, errorIsTerminal: false, now: { now })
    let code = CommandLineTool.main(
        make(environment), arguments: arguments,
        errorHandler: { error in err.withLock { $0 += "unexpected: \(error)\n" }; return 99 },
        print: { line in out.withLock { $0.append(line) } },
        printError: { line in err.withLock { $0 += line + "\n" } })
    return CLIResult(code: code, out: out.withLock { $0 }, err: err.withLock { $0 })
}

/// A target wrapper that records the order of writes and can fail after a number of them
/// (a push killed halfway, a disk filling up).
final class RecordingTarget: PushTarget, @unchecked Sendable {
    let inner: any PushTarget
    let failAfter: Int?
    private let state = Mutex<(writes: [String], count: Int)>(([], 0))

    init(_ inner: any PushTarget, failAfter: Int? = nil) {
        self.inner = inner
        self.failAfter = failAfter
    }

    var writes: [String] { state.withLock { $0.writes } }
    var displayName: String { inner.displayName }
    func prepare() throws { try inner.prepare() }
    func size(of path: String) throws -> Int? { try inner.size(of: path) }
    func read(_ path: String) throws -> Data? { try inner.read(path) }
    func list(under prefix: String) throws -> [TargetObject] { try inner.list(under: prefix) }
    func delete(_ path: String) throws { try inner.delete(path) }
    func acquireLease(for operation: String, wait: TimeInterval) throws -> any TargetLease {
        try inner.acquireLease(for: operation, wait: wait)
    }

    func write(_ path: String, data: Data, kind: PublishedKind) throws {
        let proceed = state.withLock { state in
            if let failAfter, state.count >= failAfter { return false }
            state.count += 1
            return true
        }
        guard proceed else { throw OpsError(.failure, "\(displayName)/\(path)", "killed (test)") }
        try inner.write(path, data: data, kind: kind)
        state.withLock { $0.writes.append(path) }
    }
}

/// Checks the ordering guarantee on a target: its index.json parses, and every blob list it names is
/// there, hashes to its name, and names only blobs that are there with their exact size. Returns the
/// problems found (none: consistent).
func inconsistencies(_ target: any PushTarget) throws -> [String] {
    guard let data = try target.read("index.json") else { return [] }
    let index = try PublicFolder.parseIndex(data, path: "index.json")
    let sizes = Dictionary(try target.list(under: "").map { ($0.path, $0.size) }, uniquingKeysWith: { a, _ in a })
    var problems: [String] = []
    for version in index.history.values.joined() {
        let path = "refs/\(version.refs).json"
        guard let list = try target.read(path) else { problems.append("\(path) missing"); continue }
        for entry in try BlobList(parsing: list, file: path).entries where sizes["assets/\(entry.assetHash)"] != entry.bytes {
            problems.append("assets/\(entry.assetHash) (\(path)): \(sizes["assets/\(entry.assetHash)"].map { "\($0) bytes" } ?? "missing"), needs \(entry.bytes)")
        }
        for file in version.files ?? [] where sizes[file] == nil { problems.append("\(file) missing") }
    }
    return problems
}

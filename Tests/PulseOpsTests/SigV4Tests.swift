import Foundation
import PulseCrypto
import Testing
@testable import PulseOps
@testable import PulseOpsCLI

/// The AWS SigV4 test suite (Tests/Fixtures/aws-sigv4, Apache-2.0, from aws-c-auth): every header-signed
/// case must produce AWS's canonical request, string to sign and signature, byte for byte.
struct SigV4Tests {
    static let suite = Fixtures.folder.appendingPathComponent("aws-sigv4")

    static var cases: [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: suite.path)) ?? []
        return names.filter { FileManager.default.fileExists(atPath: suite.appendingPathComponent("\($0)/request.txt").path) }.sorted()
    }

    @Test func suiteIsPresent() {
        #expect(Self.cases.count == 38, "Tests/Fixtures/aws-sigv4 should hold the 38 AWS cases")
        #expect(FileManager.default.fileExists(atPath: Self.suite.appendingPathComponent("LICENSE").path))
    }

    @Test(arguments: cases)
    func headerSignature(name: String) throws {
        let folder = Self.suite.appendingPathComponent(name)
        func text(_ file: String) throws -> String {
            try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
        }
        let context = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("context.json"))) as! [String: Any]
        let credentials = context["credentials"] as! [String: Any]
        let omitToken = context["omit_session_token"] as? Bool ?? false
        let signer = SigV4(
            credentials: AWSCredentials(
                accessKeyId: credentials["access_key_id"] as! String,
                secretAccessKey: credentials["secret_access_key"] as! String,
                // omit_session_token: the token is added after signing, so it is not signed.
                sessionToken: omitToken ? nil : credentials["token"] as? String),
            region: context["region"] as! String, service: context["service"] as! String,
            normalizePath: context["normalize"] as? Bool ?? true)
        let date = ISO8601DateFormatter().date(from: context["timestamp"] as! String)!

        var request = try Self.parse(text("request.txt"))
        if context["sign_body"] as? Bool == true {
            request.headers.append(("X-Amz-Content-Sha256", request.payloadHash))
        }
        let signature = try signer.sign(request, date: date)
        #expect(signature.canonicalRequest == (try text("header-canonical-request.txt")))
        #expect(signature.stringToSign == (try text("header-string-to-sign.txt")))
        #expect(signature.signature == (try text("header-signature.txt")).trimmingCharacters(in: .whitespacesAndNewlines))
        let signed = try text("header-signed-request.txt")
        #expect(signed.contains("Authorization:\(signature.authorization)"))
    }

    @Test func aChangedSecretChangesTheSignature() throws {
        let request = SigV4.Request(method: "GET", path: "/", headers: [("Host", "example.amazonaws.com")], payloadHash: SigV4.emptyPayloadHash)
        let date = Date(timeIntervalSince1970: 1_440_938_160)
        func sign(_ secret: String) throws -> String {
            try SigV4(credentials: AWSCredentials(accessKeyId: "AKIDEXAMPLE", secretAccessKey: secret), region: "us-east-1",
                  service: "service", normalizePath: true).sign(request, date: date).signature
        }
        #expect(try sign("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY") == "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
        #expect(try sign("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEZ") != "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
    }

    /// Reads `request.txt`: request line, headers (continuation lines folded), blank line, body.
    static func parse(_ text: String) throws -> SigV4.Request {
        let parts = text.components(separatedBy: "\n\n")
        let head = parts[0]
        let body = parts.count > 1 ? parts[1...].joined(separator: "\n\n") : ""
        var lines = head.components(separatedBy: "\n")
        let requestLine = lines.removeFirst()
        let method = String(requestLine.prefix(while: { $0 != " " }))
        var target = String(requestLine.dropFirst(method.count + 1))
        if let version = target.range(of: " HTTP/", options: .backwards) { target = String(target[..<version.lowerBound]) }
        var headers: [(name: String, value: String)] = []
        for line in lines where !line.isEmpty {
            if line.first == " " || line.first == "\t" {
                headers[headers.count - 1].value += " " + line.trimmingCharacters(in: .whitespaces)
                continue
            }
            let colon = line.firstIndex(of: ":")!
            headers.append((String(line[..<colon]), String(line[line.index(after: colon)...])))
        }
        let pathPart = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        var query: [(name: String, value: String)] = []
        if pathPart.count > 1 {
            for pair in pathPart[1].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                query.append((String(kv[0]).removingPercentEncoding!, kv.count > 1 ? String(kv[1]).removingPercentEncoding! : ""))
            }
        }
        return SigV4.Request(method: method, path: String(pathPart[0]), query: query, headers: headers,
                             payloadHash: PulseCrypto.SHA256.hex(Array(body.utf8)))
    }
}

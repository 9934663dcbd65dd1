import Foundation
import PulseCrypto
import PulseTestSupport
import Testing
@testable import PulseDevice

/// The canonical string and header against docs/server.md's worked example, with the key it publishes.
@Suite struct RequestSignerTests {
    static let examplePEM = """
        -----BEGIN PRIVATE KEY-----
        MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg6Oe/f3mk+wD8NNxX
        yZgVErvlYY0c3jPfk11EfWcsJJqhRANCAASIp79nGQkoZ2+qbIVeAiL33oLq+Od1
        efq+utqEGfMjBtOoY6ADp4U4kC8RJ2WLc4z5T4h+gUeA3LrJRCGLfhV1
        -----END PRIVATE KEY-----

        """
    static let examplePublicKey = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEiKe/ZxkJKGdvqmyFXgIi996C6vjndXn6vrrahBnzIwbTqGOgA6eFOJAvESdli3OM+U+IfoFHgNy6yUQhi34VdQ=="
    static let deviceId = "3f6c1a2b9d8e7f60a1b2c3d4e5f60718"

    @Test func theCanonicalStringsOfTheWorkedExample() {
        let get = RequestSigner.canonical(method: "GET", target: "/api/sync/keys?session=keynote", timestamp: 1_796_112_000, body: [])
        #expect(String(decoding: get, as: UTF8.self) == """
            GET
            /api/sync/keys
            session=keynote
            1796112000
            e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
            """)
        let body = Array(#"{"build":"2.4.1","online":true,"platform":"ios","rttMs":38}"#.utf8)
        let post = RequestSigner.canonical(method: "POST", target: "/api/sessions/keynote/diag", timestamp: 1_796_112_000, body: body)
        #expect(String(decoding: post, as: UTF8.self) == """
            POST
            /api/sessions/keynote/diag

            1796112000
            a7ebef53e9915c72da44c6b8d9e38817350df8e9a7951fc01c859946e5150fa0
            """)
    }

    @Test func aHeaderSignedWithTheExampleKeyVerifiesWithItsPublishedPublicKey() throws {
        let folder = try TestFolder()
        try Data(Self.examplePEM.utf8).write(to: URL(fileURLWithPath: folder.path("key.pem")))
        chmod(folder.path("key.pem"), 0o600)
        let key = try FileDeviceKey.load(at: folder.path("key.pem"))
        #expect(Data(key.publicKeySPKI).base64EncodedString() == Self.examplePublicKey)
        let signer = RequestSigner(deviceId: Self.deviceId, key: key)
        let header = try signer.header(method: "GET", target: "/api/sync/keys?session=keynote", body: [], timestamp: 1_796_112_000)
        let parts = header.split(separator: ";")
        #expect(parts.count == 3 && parts[0] == Substring(Self.deviceId) && parts[1] == "ts=1796112000" && parts[2].hasPrefix("sig="))
        let signature = try #require(Base64URL.decode(parts[2].dropFirst(4)))
        #expect(signature.count == 64)
        let published = try P256.PublicKey(derRepresentation: Data(base64Encoded: Self.examplePublicKey)!)
        let canonical = RequestSigner.canonical(method: "GET", target: "/api/sync/keys?session=keynote", timestamp: 1_796_112_000, body: [])
        #expect(published.isValidSignature(signature, for: canonical))
        // The docs' own header verifies too: the same canonical string, byte for byte.
        let documented = try #require(Base64URL.decode(
            "_MMOv2Ua0AjVqyndUqayyyoAs6BkbWse_QSPboxNX9TbHODYPopGWq2RWDzxJX33l3pX7-Aisxnsb7oIaUel9Q"))
        #expect(published.isValidSignature(documented, for: canonical))
    }

    @Test func aServerBehindAPathPrefixIsSignedWithThePathAsSent() throws {
        let client = SyncClient(server: URL(string: "https://example.net/pulse/")!, transport: NoTransport())
        #expect(client.wireTarget("/api/sync/keys?session=a") == "/pulse/api/sync/keys?session=a")
        #expect(try client.url("/api/sync/keys?session=a").absoluteString == "https://example.net/pulse/api/sync/keys?session=a")
    }

    @Test func aKeyThatReturnsDERIsRefusedWithWhatToDo() throws {
        struct DERKey: DeviceKey {
            var publicKeySPKI: [UInt8] { [] }
            func sign(_ message: [UInt8]) throws -> [UInt8] { [0x30, 0x44] + [UInt8](repeating: 1, count: 68) }
        }
        let signer = RequestSigner(deviceId: Self.deviceId, key: DERKey())
        #expect(throws: DeviceError.self) { try signer.header(method: "GET", target: "/x", body: [], timestamp: 1) }
        do { _ = try signer.header(method: "GET", target: "/x", body: [], timestamp: 1) } catch let error as DeviceError {
            #expect(error.message.contains("P1363") && error.message.contains("convert DER"))
        }
    }
}

/// A transport that is never used.
struct NoTransport: HTTPTransport {
    func exchange(_ request: DeviceRequest, cancellation: Cancellation?, _ receive: @escaping @Sendable (TransportEvent) throws -> Void) throws {
        throw DeviceError(.network, "no transport in this test")
    }
}

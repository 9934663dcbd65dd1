import Foundation
import PulseCore
import PulseCrypto
import PulseHTTPServer
import PulseServer
import PulseServerStorage
import PulseTestSupport
import SyncTestSupport
import Testing
@testable import PulseDevice

@Suite struct EnrollmentTests {
    @Test func anEnrolledFolderHoldsItsCheckedIdentityAndKeyPrivately() throws {
        let work = try TestFolder()
        let server = try TestSyncServer(package: try SamplePackage.build(in: work.url))
        let device = try TestDevice(server, token: try server.deviceCode(.session("keynote")))
        #expect(device.identity.scopeKind == "session" && device.identity.scopeId == "keynote")
        #expect(try device.folder.identity() == device.identity)
        for path in [device.folder.identityURL.path, device.folder.keyPath] {
            #expect(((try FileManager.default.attributesOfItem(atPath: path))[.posixPermissions] as? Int) == 0o600)
        }
        // The server's record names the same key.
        let stored = try #require(try server.storage.device(id: device.identity.deviceId))
        #expect(stored.publicKey == (try device.folder.key()).publicKeySPKI)
        // A second enrollment into the same folder is refused, and changes nothing.
        #expect {
            try Enrollment.enroll(server: server.url, token: try server.deviceCode(.session("keynote")), folder: device.folder, name: "x", platform: "ios", transport: device.transport)
        } throws: { ($0 as? DeviceError)?.kind == .deviceFolder }
        #expect(try device.folder.identity() == device.identity)
    }

    @Test func aRefusedTokenLeavesNothingBehind() throws {
        let work = try TestFolder()
        let server = try TestSyncServer(package: try SamplePackage.build(in: work.url))
        let code = try server.deviceCode(.session("keynote"))
        _ = try TestDevice(server, token: code)
        let temporary = try TestFolder()
        let folder = try DeviceFolder.open(temporary.path("device"), create: true)
        let transport = URLSessionTransport(timeout: 10)
        defer { transport.invalidate() }
        #expect {
            try Enrollment.enroll(server: server.url, token: code, folder: folder, name: "Second", platform: "ios", transport: transport)
        } throws: { "\($0)".contains("flat 404") }
        #expect(!folder.isEnrolled && !FileManager.default.fileExists(atPath: folder.keyPath))
    }

    /// A server whose certificate does not verify with the key it publishes is not trusted.
    @Test func aCertificateThatDoesNotVerifyIsRefused() throws {
        let otherKey = try P256.PrivateKey()
        let work = try TestFolder()
        let server = try TestSyncServer(package: try SamplePackage.build(in: work.url), wrap: { sync, _ in
            Breaker(sync, alter: { request, response in
                guard Breaker.path(request) == "/api/sync/device-cert-keys" else { return response }
                // The published key set names the real kid with another key's coordinates.
                let body = String(decoding: { if case let .bytes(bytes) = response.body { return bytes } else { return [] } }(), as: UTF8.self)
                let kid = (try? JSONValue.parse(Array(body.utf8)))?["keys"]?.arrayValue?.first?["kid"]?.stringValue ?? ""
                return Breaker.json(200, "{\"keys\":[\(otherKey.publicKey.jwk(kid: kid))]}")
            })
        })
        let temporary = try TestFolder()
        let folder = try DeviceFolder.open(temporary.path("device"), create: true)
        let transport = URLSessionTransport(timeout: 10)
        defer { transport.invalidate() }
        #expect {
            try Enrollment.enroll(server: server.url, token: try server.deviceCode(.session("keynote")), folder: folder, name: "x", platform: "ios", transport: transport)
        } throws: { "\($0)".contains("does not verify") }
        #expect(!folder.isEnrolled, "no identity is written for a certificate that does not check out")
    }
}

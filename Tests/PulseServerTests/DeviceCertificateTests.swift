import Foundation
import PulseCore
import PulseCrypto
import PulseServer
import PulseTestSupport
import SyncTestSupport
import PulseServerStorage
import PulseSyncAPI
import Testing

@Suite struct DeviceCertificateTests {
    @Test func theKeyIsMadeOncePrivatelyAndLoadedAfterwards() throws {
        let parent = try TestFolder()
        let folder = try DataFolder.prepare(parent.url.appendingPathComponent("data").path)
        let key = try DeviceCertificateKey.loadOrCreate(in: folder)
        let attributes = try FileManager.default.attributesOfItem(atPath: folder.certificateKeyPath)
        #expect(attributes[.posixPermissions] as? Int == 0o600)
        let pem = try String(contentsOfFile: folder.certificateKeyPath, encoding: .utf8)
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        #expect(try DeviceCertificateKey.loadOrCreate(in: folder).keyId == key.keyId)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted() == [DataFolder.certificateKeyName, DataFolder.databaseName])
        #expect(!"\(key)".contains(pem.dropFirst(28).prefix(20)))
    }

    @Test func concurrentFirstStartsAgreeOnOneKey() throws {
        let parent = try TestFolder()
        let folder = try DataFolder.prepare(parent.url.appendingPathComponent("data").path)
        let ids = Lines()
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            if let key = try? DeviceCertificateKey.loadOrCreate(in: folder) { ids.add(out: key.keyId) }
        }
        #expect(ids.out.count == 8 && Set(ids.out).count == 1)
    }

    @Test func aDamagedOrLooseKeyFileRefusesTheStartWithoutQuotingIt() throws {
        let parent = try TestFolder()
        let folder = try DataFolder.prepare(parent.url.appendingPathComponent("data").path)
        _ = FileManager.default.createFile(atPath: folder.certificateKeyPath, contents: Data("SECRET-LOOKING GARBAGE".utf8), attributes: [.posixPermissions: 0o600])
        let damaged = #expect(throws: ServerError.self) { try DeviceCertificateKey.loadOrCreate(in: folder) }
        #expect(damaged?.message.hasPrefix("\(folder.certificateKeyPath): not a P-256 private key in PKCS#8 PEM") == true)
        #expect(damaged?.message.contains("GARBAGE") == false)
        try FileManager.default.removeItem(atPath: folder.certificateKeyPath)
        _ = try DeviceCertificateKey.loadOrCreate(in: folder)
        chmod(folder.certificateKeyPath, 0o644)
        let loose = #expect(throws: ServerError.self) { try DeviceCertificateKey.loadOrCreate(in: folder) }
        #expect(loose?.message.hasSuffix("run chmod 600 \(folder.certificateKeyPath)") == true)
    }

    @Test func certificatesVerifyWithThePublishedKeyAndNothingElse() throws {
        let parent = try TestFolder()
        let key = try DeviceCertificateKey.loadOrCreate(in: try DataFolder.prepare(parent.url.appendingPathComponent("data").path))
        let devicePublic = try P256.PrivateKey().publicKey.derRepresentation
        let device = DeviceRecord(
            id: try DeviceID.generate(), publicKey: devicePublic, platform: "ios", name: "Ada's iPhone", scope: .series("conf"),
            enrolledAt: 1_700_000_000, revokedAt: nil, credentialId: "000000000000")
        let certificate = try DeviceCertificate.issue(for: device, key: key, issuedAt: 1_700_000_001)
        let claims = try #require(DeviceCertificate.verify(certificate, publicKey: key.privateKey.publicKey))
        #expect(claims == [
            "deviceId": .string(device.id), "publicKey": .string(Data(devicePublic).base64EncodedString()), "platform": "ios",
            "name": "Ada's iPhone", "scope": ["kind": "series", "id": "conf"], "issuedAt": 1_700_000_001, "kid": .string(key.keyId),
        ])
        #expect(DeviceCertificate.verify(certificate, publicKey: try P256.PrivateKey().publicKey) == nil)
        let parts = certificate.split(separator: ".")
        let forged = Base64URL.encode(Array(String(decoding: Base64URL.decode(parts[0])!, as: UTF8.self)
            .replacingOccurrences(of: "\"series\"", with: "\"sessio\"").utf8)) + "." + parts[1]
        #expect(DeviceCertificate.verify(forged, publicKey: key.privateKey.publicKey) == nil)

        // The JWK set publishes exactly this key under its kid.
        let set = try JSONValue.parse(Data(key.jwkSet.utf8))
        let jwk = try #require(set["keys"]?.arrayValue?.first)
        #expect(set["keys"]?.arrayValue?.count == 1 && jwk["kid"]?.stringValue == key.keyId && jwk["alg"] == "ES256")
        #expect(jwk["x"]?.stringValue == Base64URL.encode(key.privateKey.publicKey.x))
    }
}

import Foundation
import PulseCrypto
import PulseTestSupport
import Testing
@testable import PulseDevice

@Suite struct FileDeviceKeyTests {
    @Test func aNewKeyIsA0600FileThatLoadsAgainAndSigns() throws {
        let folder = try TestFolder()
        let made = try FileDeviceKey.create(at: folder.path("k.pem"))
        let attributes = try FileManager.default.attributesOfItem(atPath: folder.path("k.pem"))
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let loaded = try FileDeviceKey.load(at: folder.path("k.pem"))
        #expect(loaded.publicKeySPKI == made.publicKeySPKI)
        let signature = try loaded.sign(Array("hello".utf8))
        #expect(try P256.PublicKey(derRepresentation: made.publicKeySPKI).isValidSignature(signature, for: Array("hello".utf8)))
        #expect(throws: DeviceError.self) { try FileDeviceKey.create(at: folder.path("k.pem")) }
        #expect(try FileDeviceKey.load(at: folder.path("k.pem")).publicKeySPKI == made.publicKeySPKI, "a refused create left the key alone")
    }

    @Test func aKeyOthersMayReadIsRefusedWithTheFix() throws {
        let folder = try TestFolder()
        _ = try FileDeviceKey.create(at: folder.path("k.pem"))
        chmod(folder.path("k.pem"), 0o644)
        do {
            _ = try FileDeviceKey.load(at: folder.path("k.pem"))
            Issue.record("a 0644 key was loaded")
        } catch let error as DeviceError {
            #expect(error.kind == .deviceFolder && error.message.contains("chmod 600"))
        }
    }

    @Test func aLooseDeviceFolderIsRefused() throws {
        let folder = try TestFolder()
        let device = folder.path("phone")
        _ = try DeviceFolder.open(device, create: true)
        #expect(((try FileManager.default.attributesOfItem(atPath: device))[.posixPermissions] as? Int) == 0o700)
        chmod(device, 0o755)
        #expect(throws: DeviceError.self) { try DeviceFolder.open(device) }
        #expect(throws: DeviceError.self) { try DeviceFolder.open(folder.path("missing")) }
    }
}

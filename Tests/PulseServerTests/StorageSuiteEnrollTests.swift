import Foundation
import PulseCrypto
import PulseServer
import PulseServerStorage
import Testing

/// Credentials and enrollment, run against every storage backend.
@Suite struct StorageSuiteEnrollTests {
    static func code(_ storage: any ServerStorage, scope: DeviceScope = .session("talk"), expiresAt: Int64? = nil) throws -> [UInt8] {
        let text = try CredentialSecret.newDeviceCode()
        let hash = CredentialSecret.hash(text)!
        try storage.addCredential(NewCredential(hash: hash, kind: .deviceCode, scope: scope, createdAt: 1000, expiresAt: expiresAt))
        return hash
    }

    static func device(_ n: Int) -> NewDevice {
        NewDevice(id: String(format: "%032x", n), publicKey: TestContent.publicKey(n), platform: "ios", name: "Phone \(n)")
    }

    @Test(arguments: StorageBackend.all)
    func aDeviceCodeEnrollsExactlyOneDevice(_ backend: StorageBackend) throws {
        let instance = try backend.make()
        let storage = instance.storage
        try TestContent.seed(storage, "talk")
        let code = try Self.code(storage)
        let enrolled = try #require(try storage.enroll(credentialHash: code, device: Self.device(1), at: 1100))
        #expect(enrolled.scope == .session("talk"))
        #expect(enrolled.publicKey == TestContent.publicKey(1))
        #expect(try storage.device(id: enrolled.id) == enrolled)
        #expect(try storage.enroll(credentialHash: code, device: Self.device(2), at: 1101) == nil)
        #expect(try storage.devices().map(\.id) == [enrolled.id])
        let listed = try #require(try storage.credentials().first)
        #expect(listed.usedAt == 1100 && listed.devicesEnrolled == 1 && listed.id == CredentialSecret.listingId(hash: code))
        #expect(enrolled.credentialId == listed.id)
    }

    @Test(arguments: StorageBackend.all)
    func expiredRevokedUnknownAndStaffCredentialsEnrollNothing(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        try TestContent.seed(storage, "talk")
        let expiring = try Self.code(storage, expiresAt: 2000)
        #expect(try storage.enroll(credentialHash: expiring, device: Self.device(1), at: 2000) == nil)  // expiry is exclusive
        let revoked = try Self.code(storage)
        #expect(try storage.revokeCredential(hash: revoked, at: 1500))
        #expect(try !storage.revokeCredential(hash: revoked, at: 1501))
        #expect(try storage.enroll(credentialHash: revoked, device: Self.device(2), at: 1600) == nil)
        #expect(try storage.enroll(credentialHash: SHA256.hash([1, 2, 3]), device: Self.device(3), at: 1600) == nil)
        let staff = SHA256.hash(Array("staff".utf8))
        try storage.addCredential(NewCredential(hash: staff, kind: .staffToken, scope: nil, createdAt: 1000))
        #expect(try storage.enroll(credentialHash: staff, device: Self.device(4), at: 1600) == nil)
        #expect(try storage.isStaffToken(hash: staff, at: 1600))
        #expect(try !storage.isStaffToken(hash: expiring, at: 1600))  // a device code is not a staff token
        #expect(try storage.devices().isEmpty)
        // The expiring code still works before its time: refusals consumed nothing.
        #expect(try storage.enroll(credentialHash: expiring, device: Self.device(5), at: 1999) != nil)
    }

    @Test(arguments: StorageBackend.all)
    func revokingByListingIdWorksAndStaffTokensCanBeRevoked(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        let staff = SHA256.hash(Array("staff".utf8))
        try storage.addCredential(NewCredential(hash: staff, kind: .staffToken, scope: nil, createdAt: 1000))
        #expect(try storage.revokeCredential(listingId: CredentialSecret.listingId(hash: staff), at: 1100))
        #expect(try !storage.isStaffToken(hash: staff, at: 1200))
        #expect(try !storage.revokeCredential(listingId: "000000000000", at: 1200))
    }

    @Test(arguments: StorageBackend.all)
    func aTakenDeviceIdRefusesAndConsumesNothing(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        try TestContent.seed(storage, "talk")
        let first = try Self.code(storage)
        _ = try #require(try storage.enroll(credentialHash: first, device: Self.device(1), at: 1100))
        let second = try Self.code(storage)
        #expect(try storage.enroll(credentialHash: second, device: Self.device(1), at: 1101) == nil)
        // The second code was rolled back with the failed insert: it still enrolls a new id.
        #expect(try storage.enroll(credentialHash: second, device: Self.device(2), at: 1102) != nil)
    }

    @Test(arguments: StorageBackend.all)
    func registrationTokensAreDurableUpToTheirCap(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        try TestContent.seed(storage, "talk")
        let open = SHA256.hash(Array("open".utf8))
        try storage.addCredential(NewCredential(hash: open, kind: .registrationToken, scope: .series("conf"), createdAt: 1000))
        for n in 0..<5 { #expect(try storage.enroll(credentialHash: open, device: Self.device(n), at: 1100)?.scope == .series("conf")) }
        let capped = SHA256.hash(Array("capped".utf8))
        try storage.addCredential(NewCredential(hash: capped, kind: .registrationToken, scope: .series("conf"), maxDevices: 2, createdAt: 1000))
        #expect(try storage.enroll(credentialHash: capped, device: Self.device(10), at: 1100) != nil)
        #expect(try storage.enroll(credentialHash: capped, device: Self.device(11), at: 1100) != nil)
        #expect(try storage.enroll(credentialHash: capped, device: Self.device(12), at: 1100) == nil)
        #expect(try storage.devices().count == 7)
    }

    @Test(arguments: StorageBackend.all)
    func revokedDevicesStayListedAsRevoked(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        try TestContent.seed(storage, "talk")
        let device = try #require(try storage.enroll(credentialHash: try Self.code(storage), device: Self.device(1), at: 1100))
        #expect(try storage.revokeDevice(id: device.id, at: 1200))
        #expect(try !storage.revokeDevice(id: device.id, at: 1300))
        #expect(try !storage.revokeDevice(id: "nobody", at: 1300))
        #expect(try storage.device(id: device.id)?.revokedAt == 1200)
    }

    /// An enrollment whose answer was lost (a killed instance, a proxy's retry, the app asking again) is the
    /// same credential and key again: it gets the device it made and spends nothing more.
    @Test(arguments: StorageBackend.all)
    func aRetriedEnrollmentGetsTheDeviceItMadeAndSpendsNothingMore(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        try TestContent.seed(storage, "talk")
        let code = try Self.code(storage)
        let made = try #require(try storage.enroll(credentialHash: code, device: Self.device(1), at: 1100))
        var retry = Self.device(2)
        retry.publicKey = Self.device(1).publicKey
        #expect(try storage.enroll(credentialHash: code, device: retry, at: 1200) == made)  // its id and enrolledAt
        #expect(try storage.enroll(credentialHash: code, device: Self.device(3), at: 1200) == nil)  // another key: spent
        #expect(try storage.devices() == [made])
        #expect(try storage.credentials().first?.devicesEnrolled == 1)

        // A registration token: the retry takes no place under the cap.
        let token = SHA256.hash(Array("two".utf8))
        try storage.addCredential(NewCredential(hash: token, kind: .registrationToken, scope: .series("conf"), maxDevices: 2, createdAt: 1000))
        let first = try #require(try storage.enroll(credentialHash: token, device: Self.device(10), at: 1100))
        var again = Self.device(11)
        again.publicKey = Self.device(10).publicKey
        #expect(try storage.enroll(credentialHash: token, device: again, at: 1101)?.id == first.id)
        #expect(try storage.enroll(credentialHash: token, device: Self.device(12), at: 1102) != nil)
        #expect(try storage.enroll(credentialHash: token, device: Self.device(13), at: 1103) == nil)  // the cap: 2

        // Not for a revoked device (the code stays spent), nor once the credential is revoked.
        #expect(try storage.revokeDevice(id: made.id, at: 1300))
        #expect(try storage.enroll(credentialHash: code, device: retry, at: 1301) == nil)
        #expect(try storage.revokeCredential(hash: token, at: 1302))
        #expect(try storage.enroll(credentialHash: token, device: again, at: 1303) == nil)
        #expect(try storage.devices().count == 3)
    }

    // MARK: - Races decided by the database

    /// Twenty copies of one enrollment at once (a proxy's retry racing the first attempt) on an uncapped
    /// registration token, over two instances: one device.
    @Test(arguments: StorageBackend.all)
    func concurrentCopiesOfOneEnrollmentMakeOneDevice(_ backend: StorageBackend) throws {
        let instance = try backend.make()
        let token = SHA256.hash(Array("open".utf8))
        try instance.storage.addCredential(NewCredential(hash: token, kind: .registrationToken, scope: .series("conf"), createdAt: 1000))
        let peer = try instance.peer()
        let ids = Lines()
        let failures = Counter()
        DispatchQueue.concurrentPerform(iterations: 20) { n in
            do {
                var device = Self.device(100 + n)
                device.publicKey = TestContent.publicKey(7)
                let storage = n % 2 == 0 ? instance.storage : peer
                if let made = try storage.enroll(credentialHash: token, device: device, at: 1100) { ids.add(out: made.id) }
            } catch { failures.add() }
        }
        #expect(failures.value == 0)
        #expect(ids.out.count == 20 && Set(ids.out).count == 1)
        #expect(try instance.storage.devices().count == 1)
        #expect(try instance.storage.credentials().first?.devicesEnrolled == 1)
    }

    @Test(arguments: StorageBackend.all)
    func fiftyThreadsEnrollingWithOneCodeMakeExactlyOneDevice(_ backend: StorageBackend) throws {
        let instance = try backend.make()
        try TestContent.seed(instance.storage, "talk")
        let code = try Self.code(instance.storage)
        // Half the threads go through a second instance: the race must hold across processes too.
        let peer = try instance.peer()
        let winners = Counter()
        let failures = Counter()
        DispatchQueue.concurrentPerform(iterations: 50) { n in
            do {
                let storage = n % 2 == 0 ? instance.storage : peer
                if try storage.enroll(credentialHash: code, device: Self.device(n), at: 1100) != nil { winners.add() }
            } catch { failures.add() }
        }
        #expect(failures.value == 0)
        #expect(winners.value == 1)
        #expect(try instance.storage.devices().count == 1)
    }

    @Test(arguments: StorageBackend.all)
    func twentyConcurrentEnrollsWithACapOfThreeMakeExactlyThree(_ backend: StorageBackend) throws {
        let instance = try backend.make()
        let token = SHA256.hash(Array("three".utf8))
        try instance.storage.addCredential(NewCredential(hash: token, kind: .registrationToken, scope: .series("conf"), maxDevices: 3, createdAt: 1000))
        let peer = try instance.peer()
        let winners = Counter()
        let failures = Counter()
        DispatchQueue.concurrentPerform(iterations: 20) { n in
            do {
                let storage = n % 2 == 0 ? instance.storage : peer
                if try storage.enroll(credentialHash: token, device: Self.device(n), at: 1100) != nil { winners.add() }
            } catch { failures.add() }
        }
        #expect(failures.value == 0)
        #expect(winners.value == 3)
        #expect(try instance.storage.devices().count == 3)
        #expect(try instance.storage.credentials().first?.devicesEnrolled == 3)
    }
}

/// A thread-safe counter for race tests.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add(_ n: Int = 1) { lock.withLock { count += n } }
    var value: Int { lock.withLock { count } }
}

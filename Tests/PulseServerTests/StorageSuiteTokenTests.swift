import Foundation
import PulseCrypto
import PulseServer
import PulseServerStorage
import Testing

/// Registration tokens as an attendee link (issue 17, item 5), against every storage backend: their own
/// limits stored and listed, the devices each enrolled in the last minute, and a revocation that cuts the
/// devices a token enrolled in the same transaction.
@Suite struct StorageSuiteTokenTests {
    static func token(_ storage: any ServerStorage, limits: TokenLimits = .defaults, maxDevices: Int? = nil) throws -> [UInt8] {
        let hash = CredentialSecret.hash(try CredentialSecret.newToken())!
        try storage.addCredential(NewCredential(hash: hash, kind: .registrationToken, scope: .series("conf"), maxDevices: maxDevices, limits: limits, createdAt: 1000))
        return hash
    }

    @Test(arguments: StorageBackend.all)
    func aTokensLimitsAreStoredAndListed(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        try TestContent.seed(storage, "talk")
        let limited = try Self.token(storage, limits: TokenLimits(enrollRate: 3, enrollBurst: 40, maxStreams: 0), maxDevices: 9)
        let plain = try Self.token(storage)
        let code = try StorageSuiteEnrollTests.code(storage)
        let listed = Dictionary(try storage.credentials().map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(listed[CredentialSecret.listingId(hash: limited)]?.limits == TokenLimits(enrollRate: 3, enrollBurst: 40, maxStreams: 0))
        #expect(listed[CredentialSecret.listingId(hash: limited)]?.maxDevices == 9)
        #expect(listed[CredentialSecret.listingId(hash: plain)]?.limits == .defaults)
        let tokens = try storage.registrationTokens()
        #expect(Set(tokens.map(\.hash)) == [limited, plain])
        #expect(tokens.first { $0.hash == limited }?.limits.enrollBurst == 40)
        #expect(tokens.first { $0.hash == limited }?.listingId == CredentialSecret.listingId(hash: limited))
        // A revoked token stays listed (its devices' streams stay capped); device codes never are.
        #expect(try storage.revokeCredential(hash: plain, at: 1100))
        #expect(Set(try storage.registrationTokens().map(\.hash)) == [limited, plain])
        #expect(!(try storage.registrationTokens().contains { $0.hash == code }))
    }

    @Test(arguments: StorageBackend.all)
    func recentEnrollmentsCountEachTokensDevicesSinceAMoment(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        try TestContent.seed(storage, "talk")
        let busy = try Self.token(storage), quiet = try Self.token(storage)
        for n in 0..<5 { _ = try #require(try storage.enroll(credentialHash: busy, device: StorageSuiteEnrollTests.device(n), at: 2000 + Int64(n) * 20)) }
        _ = try #require(try storage.enroll(credentialHash: quiet, device: StorageSuiteEnrollTests.device(10), at: 1900))
        #expect(try storage.recentEnrollments(since: 2040) == [CredentialSecret.listingId(hash: busy): 3])
        #expect(try storage.recentEnrollments(since: 1000) == [CredentialSecret.listingId(hash: busy): 5, CredentialSecret.listingId(hash: quiet): 1])
        #expect(try storage.recentEnrollments(since: 5000) == [:])
    }

    /// The console's lists: a page of the credentials of some kinds, newest first, and how many there are.
    @Test(arguments: StorageBackend.all)
    func credentialsOfSomeKindsComeInPagesNewestFirst(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        try TestContent.seed(storage, "talk")
        var made: [(CredentialKind, String)] = []
        for (n, kind) in [CredentialKind.deviceCode, .registrationToken, .staffToken, .deviceCode, .staffToken].enumerated() {
            let hash = CredentialSecret.hash(try CredentialSecret.newToken())!
            try storage.addCredential(NewCredential(
                hash: hash, kind: kind, scope: kind == .staffToken ? nil : .series("conf"), createdAt: 1000 + Int64(n),
                staffRole: kind == .staffToken ? .admin : nil))
            made.append((kind, CredentialSecret.listingId(hash: hash)))
        }
        let enrolling = try storage.credentials(kinds: [.deviceCode, .registrationToken], offset: 0, limit: 2)
        #expect(enrolling.total == 3 && enrolling.credentials.map(\.id) == [made[3].1, made[1].1])
        #expect(try storage.credentials(kinds: [.deviceCode, .registrationToken], offset: 2, limit: 2).credentials.map(\.id) == [made[0].1])
        let staff = try storage.credentials(kinds: [.staffToken], offset: 0, limit: 10)
        #expect(staff.total == 2 && staff.credentials.map(\.id) == [made[4].1, made[2].1] && staff.credentials.allSatisfy { $0.staffRole == .admin })
        #expect(try storage.credentials(kinds: [], offset: 0, limit: 10).total == 0)
    }

    /// The counts behind "enrolled in the last minute" are 10-second buckets written with each enrollment:
    /// `since` counts from the start of its bucket, an enrollment that failed counts nothing, and buckets older
    /// than `EnrollmentBuckets.kept` are pruned by the next enrollment.
    @Test(arguments: StorageBackend.all)
    func recentEnrollmentsAreTenSecondBucketsKeptTenMinutes(_ backend: StorageBackend) throws {
        let storage = try backend.make().storage
        try TestContent.seed(storage, "talk")
        let busy = try Self.token(storage)
        let id = CredentialSecret.listingId(hash: busy)
        for (n, at) in [(0, 1000), (1, 1005), (2, 1012)] {
            _ = try #require(try storage.enroll(credentialHash: busy, device: StorageSuiteEnrollTests.device(n), at: Int64(at)))
        }
        #expect(try storage.recentEnrollments(since: 1009) == [id: 3])
        #expect(try storage.recentEnrollments(since: 1010) == [id: 1])
        // A taken device id: no device, no count.
        var taken = StorageSuiteEnrollTests.device(9)
        taken.id = StorageSuiteEnrollTests.device(0).id
        #expect(try storage.enroll(credentialHash: busy, device: taken, at: 1013) == nil)
        #expect(try storage.recentEnrollments(since: 0) == [id: 3])
        // Ten minutes on: the bucket of 1000 goes, that of 1010 stays.
        _ = try #require(try storage.enroll(credentialHash: busy, device: StorageSuiteEnrollTests.device(3), at: 1000 + EnrollmentBuckets.kept + 15))
        #expect(try storage.recentEnrollments(since: 0) == [id: 2])
        #expect(try storage.credentials().first { $0.id == id }?.devicesEnrolled == 4)
    }

    @Test(arguments: StorageBackend.all)
    func revokingWithDevicesCutsEveryDeviceTheTokenEnrolled(_ backend: StorageBackend) throws {
        let instance = try backend.make()
        let storage = instance.storage
        try TestContent.seed(storage, "talk")
        let leaked = try Self.token(storage), other = try Self.token(storage)
        var leakedDevices: [String] = []
        for n in 0..<6 { leakedDevices.append(try #require(try storage.enroll(credentialHash: leaked, device: StorageSuiteEnrollTests.device(n), at: 1100)).id) }
        let kept = try #require(try storage.enroll(credentialHash: other, device: StorageSuiteEnrollTests.device(20), at: 1100))
        #expect(try storage.revokeDevice(id: leakedDevices[0], at: 1150))  // one was revoked before
        let before = try instance.settledGeneration()

        #expect(try storage.revokeCredential(hash: leaked, at: 1200, withDevices: true) == Revocation(credential: true, devices: 5))
        for id in leakedDevices { #expect(try storage.device(id: id)?.isRevoked == true) }
        #expect(try storage.device(id: leakedDevices[1])?.revokedAt == 1200 && storage.device(id: leakedDevices[0])?.revokedAt == 1150)
        #expect(try storage.device(id: kept.id)?.isRevoked == false)
        #expect(try storage.enroll(credentialHash: leaked, device: StorageSuiteEnrollTests.device(30), at: 1300) == nil)
        let after = try instance.settledGeneration()
        #expect(after.devices != before.devices && after.credentials != before.credentials)
        // Nothing left to revoke: nil; the token alone on an already revoked token: nil.
        #expect(try storage.revokeCredential(hash: leaked, at: 1400, withDevices: true) == nil)
        #expect(try storage.revokeCredential(hash: leaked, at: 1400, withDevices: false) == nil)
        // A token revoked alone first, its devices later (the operator's second thought), by listing id.
        for n in 40..<43 { _ = try #require(try storage.enroll(credentialHash: other, device: StorageSuiteEnrollTests.device(n), at: 1500)) }
        #expect(try storage.revokeCredential(hash: other, at: 1600))
        #expect(try storage.revokeCredential(listingId: CredentialSecret.listingId(hash: other), at: 1700, withDevices: true) == Revocation(credential: false, devices: 4))
        #expect(try storage.devices().allSatisfy { $0.isRevoked })
        #expect(try storage.revokeCredential(listingId: "000000000000", at: 1800, withDevices: true) == nil)
    }

    /// Enrollments racing the revocation: every device that got in is revoked with it, none gets in after.
    @Test(arguments: StorageBackend.all)
    func noDeviceEscapesARevocationRacingEnrollments(_ backend: StorageBackend) throws {
        let instance = try backend.make()
        let storage = instance.storage
        let peer = try instance.peer()
        try TestContent.seed(storage, "talk")
        let leaked = try Self.token(storage)
        let enrolled = Lines()
        DispatchQueue.concurrentPerform(iterations: 9) { worker in
            if worker == 0 {
                // In the middle of the burst: once a few are in.
                while enrolled.out.count < 5 { usleep(200) }
                _ = try? storage.revokeCredential(hash: leaked, at: 1200, withDevices: true)
                return
            }
            for n in 0..<15 {
                let side: any ServerStorage = worker % 2 == 0 ? storage : peer
                if let device = try? side.enroll(credentialHash: leaked, device: StorageSuiteEnrollTests.device(worker * 100 + n), at: 1100) {
                    enrolled.add(out: device.id)
                }
            }
        }
        #expect(enrolled.out.count >= 5 && enrolled.out.count < 120, "\(enrolled.out.count) enrolled: the revocation did not land in the burst")
        let devices = try storage.devices()
        #expect(devices.count == enrolled.out.count)
        #expect(devices.allSatisfy { $0.isRevoked }, "\(devices.filter { !$0.isRevoked }.count) devices escaped the revocation")
    }
}

import Foundation
import PulseCore
import PulseCrypto
import PulseStore
import PulseTestSupport
import Testing

/// The public index and blob lists as read from a folder or an S3 object: one parser, and an error that
/// names the file and says what to do.
struct PublicFolderTests {
    static let packageId = String(repeating: "0123456789abcdef", count: 2)

    static func index(format: String?, packageId: String = packageId) -> Data {
        let field = format.map { #""format": "\#($0)", "# } ?? ""
        return Data(#"{\#(field)"packageId": "\#(packageId)", "appconfig": {}, "history": {}}"#.utf8)
    }

    @Test func aCurrentIndexIsRead() throws {
        let index = try PublicFolder.parseIndex(Self.index(format: PublicIndex.currentFormat), path: "index.json")
        #expect(index.packageId.hex == Self.packageId)
        #expect(index.history.isEmpty && index.appconfig.isEmpty)
    }

    @Test func everyOtherIndexIsRefusedSayingWhy() throws {
        func refusal(_ data: Data) -> String? {
            do { _ = try PublicFolder.parseIndex(data, path: "s3://bucket/index.json"); return nil } catch { return "\(error)" }
        }
        #expect(refusal(Self.index(format: PackageIndex.legacyFormat))
            == "s3://bucket/index.json: is a pulse-package/1 index (published by an older pulse-pack, with the manifests beside it): rebuild the package and push its public part")
        #expect(refusal(Self.index(format: "pulse-public/2")) == #"s3://bucket/index.json: index format "pulse-public/2" is not pulse-public/1"#)
        #expect(refusal(Self.index(format: nil)) == "s3://bucket/index.json: not a pulse public index")
        #expect(refusal(Self.index(format: PublicIndex.currentFormat, packageId: "ABC")) == "s3://bucket/index.json: not a readable pulse-public/1 index")
        let syntax = refusal(Data("{\n  \"format\": \n".utf8)) ?? ""
        #expect(syntax.hasPrefix("s3://bucket/index.json:") && syntax.contains(": not valid JSON: "), "\(syntax)")
    }

    @Test func aBlobListMustHashToItsName() throws {
        let bytes = Data(#"{"blobs": []}"#.utf8)
        let name = SHA256.hex(bytes)
        try PublicFolder.check(bytes, named: name, path: "refs/\(name).json")
        #expect(throws: StoreError(path: "refs/\(name).json", "bytes do not hash to its name (damaged or edited)")) {
            try PublicFolder.check(bytes + Data(" ".utf8), named: name, path: "refs/\(name).json")
        }
    }

    @Test func locateFindsThePublicPartOfAPackageOrTakesAPushedFolder() throws {
        let temporary = try TestFolder()
        let folder = temporary.url
        #expect(PublicFolder.locate(folder).root == folder)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("public"), withIntermediateDirectories: true)
        #expect(PublicFolder.locate(folder).root == folder.appendingPathComponent("public"))
        #expect(!PublicFolder.locate(folder).exists)
    }
}

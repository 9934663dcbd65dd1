import Foundation
import PulseTestSupport
import Testing
@testable import PulseOrigin

/// `--package P` serves `P/public` when a package folder has one (the build's output), else `P` itself
/// (a folder `pulse-pack push` wrote). The server part next to it is never read.
@Suite struct PackageFolderTests {
    @Test func aPackageFolderIsServedFromItsPublicPart() throws {
        let published = try TestPackage.publicPart()
        let hash = try published.addBlob(Array("public blob".utf8))
        let version = try published.addAppConfig("acme", json: #"{"org":"acme"}"#)
        let folder = try TestFolder()
        let package = folder.url
        try FileManager.default.createDirectory(at: package.appendingPathComponent("server"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: published.publicRoot, to: package.appendingPathComponent("public"))
        // What only the sync server may read sits next to it, and must not be reachable.
        try Data("device-scoped".utf8).write(to: package.appendingPathComponent("server/index.json"))

        let origin = try Origin(configuration: OriginConfiguration(packageRoot: package), accessLog: nil, alarm: { _ in })
        #expect(origin.package.root.lastPathComponent == "public")
        #expect(get(origin, "/api/sync/asset/\(hash)").status == 200)
        #expect(get(origin, "/api/sync/appconfig?org=acme").header("ETag") == "\"\(version)\"")
        #expect(get(origin, "/server/index.json").status == 404)

        // Without public/, the folder is taken as a pushed one.
        let pushed = try Origin(configuration: OriginConfiguration(packageRoot: published.publicRoot), accessLog: nil, alarm: { _ in })
        #expect(pushed.package.root == published.publicRoot)
        #expect(get(pushed, "/api/sync/asset/\(hash)").status == 200)
    }

    @Test func anIndexOfTheOldLayoutIsRefusedWithWhatToDo() throws {
        let package = try TestPackage.publicPart()
        try Data(#"{"format":"pulse-package/1","sessions":{},"series":{},"appconfig":{}}"#.utf8)
            .write(to: package.publicRoot.appendingPathComponent("index.json"))
        #expect {
            try Origin(configuration: OriginConfiguration(packageRoot: package.publicRoot), accessLog: nil)
        } throws: { error in
            "\(error)".contains("pulse-package/1") && "\(error)".contains("rebuild")
        }
    }
}

import Foundation
import PulsePack

/// The bundled samples (Samples/series.json: series devconf-2026, sessions keynote (a 14-page PDF) and
/// workshop (12 images)) built by the real packager into a folder of the test's, with a secret file of
/// its own so that a rebuild after an edit keeps every unchanged slide's blob.
public struct SamplePackage: Sendable {
    public static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Samples").standardizedFileURL

    /// The package folder (`public/`, `server/`).
    public let root: URL
    /// A copy of Samples/ this package was built from (edit it, then `rebuild`).
    public let input: URL
    let secret: URL
    let config: URL

    /// Copies the samples into `folder` and builds them into `folder/package`.
    public static func build(in folder: URL) throws -> SamplePackage {
        let input = folder.appendingPathComponent("samples")
        try FileManager.default.copyItem(at: samples, to: input)
        let package = SamplePackage(
            root: folder.appendingPathComponent("package"), input: input, secret: folder.appendingPathComponent("secret.b64"),
            config: folder.appendingPathComponent("config"))
        try package.rebuild()
        return package
    }

    /// Builds the (edited) input into the package again.
    public func rebuild() throws {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = config.path
        environment["PULSE_PACKAGE_SECRET"] = nil
        let options = Builder.Options(
            input: input.appendingPathComponent("series.json"), output: root, secretFile: secret, environment: environment)
        _ = try Builder(options: options).run()
    }

    /// Replaces slide `index` (1-based file name) of the workshop's image deck with another image of the samples.
    public func replaceWorkshopSlide(_ number: Int, with other: String = "decks/keynote-images/slide2.png") throws {
        let target = input.appendingPathComponent("decks/workshop-images/slide\(number).png")
        try FileManager.default.removeItem(at: target)
        try FileManager.default.copyItem(at: input.appendingPathComponent(other), to: target)
    }

    public var publicPart: URL { root.appendingPathComponent("public") }
}

/// The version every executable prints for `--version` (`pulse-pack 0.2.0`): kept here, in one place,
/// so that a tool added later gets it through `CommandLineTool` without a line of its own. Raise it
/// with each release (a hand-kept constant: SwiftPM runs no command at build time to ask git).
public enum ToolVersion {
    public static let current = "0.2.0"
}

import Foundation
import PulseOpsCLI

// Started by `pulse-pack push|gc` in its place (see PulsePackCLI's OpsCommands); it presents itself as pulse-pack.
exit(OpsCLI.main(Array(CommandLine.arguments.dropFirst())))

import Foundation
import PulsePack

exit(PulsePackCLI.main(Array(CommandLine.arguments.dropFirst())))

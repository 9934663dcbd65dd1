import Foundation
import PulseOriginCLI

exit(OriginCommand.main(Array(CommandLine.arguments.dropFirst())))

import Foundation
import PulseOrigin

exit(OriginCommand.main(Array(CommandLine.arguments.dropFirst())))

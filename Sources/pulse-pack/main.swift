import PulsePack

module serac-lincheck

go 1.19

require github.com/anishathalye/porcupine v1.3.1

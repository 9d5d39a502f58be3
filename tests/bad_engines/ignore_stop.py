"""Never ends a search by itself and ignores ``stop`` (it still answers
``isready`` and exits on ``quit``)."""
from _base import run

run(on_go=lambda state: None)

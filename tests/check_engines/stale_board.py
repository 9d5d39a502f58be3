"""Plays well in its first game; from its second ``uginewgame`` on it stops
following ``position`` commands (its board is never reset between games) and
answers every ``go`` with a move of the start position."""
import sys

from arbiter.games import GAME_NAMES, get_game


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


game, fen, games = "troll", None, 0
moves: list[str] = []
for raw in sys.stdin:
    words = raw.split()
    command = words[0] if words else ""
    if command == "ugi":
        say("id name stale\nid author the arbiter tests")
        say("option name UGI_Game type combo default troll " + " ".join(f"var {g}" for g in GAME_NAMES))
        say("ugiok")
    elif command == "isready":
        say("readyok")
    elif command == "setoption" and words[2:3] == ["UGI_Game"]:
        game = words[4]
    elif command == "uginewgame":
        games += 1
    elif command == "position" and games < 2:
        at = words.index("moves") if "moves" in words else len(words)
        fen = " ".join(words[2:at]) if words[1] == "fen" else None
        moves = words[at + 1:]
    elif command == "go":
        position = get_game(game).position(fen, moves)
        say(f"bestmove {position.legal_moves()[0]}")
    elif command == "quit":
        break

